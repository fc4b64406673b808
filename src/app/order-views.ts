import type { z } from "zod";
import type { BillingOut, OrderOut } from "../api/schemas/orders.ts";
import { formatTable } from "../catalogue/text-table.ts";
import { MS_PER_DAY, parseIso, toIsoMicros } from "../core/time.ts";

/** Terminal and --json renderings of the admin API's orders and billing for the CLI. */

export type OrderJson = z.output<typeof OrderOut>;
export type BillingJson = z.output<typeof BillingOut>;

/** `2024-10-16T04:10:00.000000Z` → `2024-10-16 04:10Z`: minutes are enough on a terminal. */
function short(iso: string | null): string {
  return iso === null ? "" : `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z`;
}

export function renderOrders(orders: readonly OrderJson[], json: boolean): string {
  if (json) return JSON.stringify(orders, null, 2);
  if (orders.length === 0) return "no orders";
  return formatTable(
    ["ID", "KIND", "ACCOUNT", "STATUS", "CARRIER", "TRACKING", "NEXT", "AT"],
    orders.map((o) => [
      o.id,
      o.kind,
      o.client_domain ?? o.account_id,
      o.status,
      o.carrier ?? "",
      o.tracking_number ?? "",
      o.next_status ?? (o.halted === null ? "" : `(${o.halted})`),
      short(o.next_at),
    ]),
  );
}

export function renderOrder(order: OrderJson, json: boolean): string {
  if (json) return JSON.stringify(order, null, 2);
  const lines = [
    `order ${order.id} (${order.kind}, ${order.client_domain ?? order.account_id}): ${order.status}${
      order.removed ? " — cancelled, removed" : ""
    }`,
  ];
  const box = [order.ships_device ? "device" : null, order.ships_gateway ? "gateway" : null]
    .filter((x) => x !== null)
    .join(" + ");
  if (order.tracking_link !== null) {
    lines.push(`  ${order.carrier} ${order.tracking_number}  ${order.tracking_link}`);
  }
  if (box !== "") lines.push(`  box: ${box}, hardware ${order.hardware_uuid ?? "—"}`);
  if (order.expected_delivery !== null) {
    lines.push(`  expected delivery: ${short(order.expected_delivery)}`);
  }
  if (order.next_status !== null) {
    lines.push(`  next: ${order.next_status} at ${short(order.next_at)}`);
  }
  if (order.halted !== null) lines.push(`  stopped: ${order.halted}`);
  for (const h of order.history) {
    lines.push(
      `  ${short(h.at)}  ${h.status.padEnd(22)}  ${h.detail}${h.location ? ` (${h.location})` : ""}`,
    );
  }
  return lines.join("\n");
}

export function renderBilling(report: BillingJson, json: boolean): string {
  if (json) return JSON.stringify(report, null, 2);
  const last = toIsoMicros((parseIso(report.to) ?? 0) - MS_PER_DAY).slice(0, 10);
  const rows = report.accounts.map((a) => [
    a.client_domain,
    String(a.device_days),
    String(a.devices.length),
    String(a.hardware_shipped.devices),
    String(a.hardware_shipped.gateways),
    `${a.supplies.length} (${a.supply_charges})`,
  ]);
  return [
    `billing ${report.from.slice(0, 10)} to ${last} (as of ${short(report.as_of)})`,
    formatTable(
      [
        "ACCOUNT",
        "DEVICE-DAYS",
        "DEVICES",
        "DEVICES SHIPPED",
        "GATEWAYS SHIPPED",
        "SUPPLIES (USD)",
      ],
      rows,
    ),
    `total: ${report.device_days} device-days`,
  ].join("\n");
}
