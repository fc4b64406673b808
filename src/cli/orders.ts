import type { Command } from "commander";
import { AdminClient } from "../app/admin-client.ts";
import { type OrderJson, renderOrder, renderOrders } from "../app/order-views.ts";
import { adminTarget, DEFAULT_LAB_URL, LAB_URL_ENV } from "../config/admin-target.ts";
import { ADMIN_TOKEN_ENV } from "../config/serve-config.ts";
import { CARRIER_EVENT_CHOICES } from "../fulfilment/shipment-flow.ts";
import type { CliIo } from "./io.ts";

export interface LabFlags {
  url?: string;
  adminToken?: string;
  json?: boolean;
}

/** The options of every command that acts through a running serve's admin API. */
export function labOptions(command: Command): Command {
  return command
    .option(
      "--url <url>",
      `base URL of the running rpmlab serve (default $${LAB_URL_ENV}, else ${DEFAULT_LAB_URL})`,
    )
    .option("--admin-token <token>", `its admin token (default $${ADMIN_TOKEN_ENV})`)
    .option("--json", "print JSON as the admin API answers it");
}

export function labClient(flags: LabFlags): AdminClient {
  return new AdminClient(adminTarget(flags));
}

/**
 * `rpmlab orders list|show|advance|inject|cancel` (issue 4 §2 "Admin"): the fulfilment orders of
 * a running `rpmlab serve`, through its admin API — the serve owns the simulator's timers, so
 * moving an order anywhere else would go unseen by them.
 */
export function registerOrdersCommand(program: Command, io: CliIo): void {
  const orders = program
    .command("orders")
    .description("Fulfilment orders (device requests and replacements) of a running rpmlab serve");

  labOptions(
    orders
      .command("list")
      .description("List orders, oldest first")
      .option("--status <status>", "a fulfilment status, shipped or pending (any case)")
      .option("--account <client-domain>", "one account's orders")
      .option("--kind <kind>", "device or replacement (any case)"),
  ).action(async (flags: LabFlags & { status?: string; account?: string; kind?: string }) => {
    const rows = await labClient(flags).list<OrderJson>("orders/", {
      status: flags.status,
      account: flags.account,
      kind: flags.kind,
    });
    io.out(renderOrders(rows, flags.json === true));
  });

  labOptions(
    orders
      .command("show")
      .description("An order with its carrier history")
      .argument("<id>", "the order's id (the hwi_device_id of a request, a replacement's id)"),
  ).action(async (id: string, flags: LabFlags) => {
    const order = await labClient(flags).get<OrderJson>(`orders/${encodeURIComponent(id)}/`);
    io.out(renderOrder(order, flags.json === true));
  });

  labOptions(
    orders
      .command("advance")
      .description(
        "Move an order to a status, through every status a carrier would pass on the way (each fires its webhook)",
      )
      .argument("<id>", "the order's id")
      .argument("<status>", 'e.g. Dropshipped, "In Transit", Delivered, Cancelled')
      .option("--hardware-uuid <id>", "when it ships on the way: ship this gateway id or IMEI")
      .option("--detail <text>", "the carrier history's text for the last step"),
  ).action(
    async (
      id: string,
      status: string,
      flags: LabFlags & { hardwareUuid?: string; detail?: string },
    ) => {
      const order = await labClient(flags).post<OrderJson>(
        `orders/${encodeURIComponent(id)}/advance/`,
        {
          status,
          ...(flags.hardwareUuid === undefined ? {} : { hardware_uuid: flags.hardwareUuid }),
          ...(flags.detail === undefined ? {} : { detail: flags.detail }),
        },
      );
      io.out(renderOrder(order, flags.json === true));
    },
  );

  labOptions(
    orders
      .command("inject")
      .description("Inject a carrier event into an order")
      .argument("<id>", "the order's id")
      .argument("<event>", `${CARRIER_EVENT_CHOICES} (any case)`)
      .option("--location <place>", "where it happened, e.g. Memphis, TN")
      .option("--detail <text>", "the carrier history's text"),
  ).action(
    async (id: string, event: string, flags: LabFlags & { location?: string; detail?: string }) => {
      const order = await labClient(flags).post<OrderJson>(
        `orders/${encodeURIComponent(id)}/events/`,
        {
          event,
          ...(flags.location === undefined ? {} : { location: flags.location }),
          ...(flags.detail === undefined ? {} : { detail: flags.detail }),
        },
      );
      io.out(renderOrder(order, flags.json === true));
    },
  );

  labOptions(
    orders
      .command("cancel")
      .description(
        "Cancel a pending order: it is removed, the Cancelled webhook is its only record (spec 3)",
      )
      .argument("<id>", "the order's id")
      .option("--detail <text>", "why: the carrier history's text, in the answer only"),
  ).action(async (id: string, flags: LabFlags & { detail?: string }) => {
    const order = await labClient(flags).post<OrderJson>(
      `orders/${encodeURIComponent(id)}/advance/`,
      { status: "Cancelled", ...(flags.detail === undefined ? {} : { detail: flags.detail }) },
    );
    io.out(renderOrder(order, flags.json === true));
  });
}
