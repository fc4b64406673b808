import { z } from "zod";
import { charField, drfObject, optionalText } from "../../core/drf-fields.ts";
import { toIsoMicros } from "../../core/time.ts";
import type { BillingReport } from "../../fulfilment/billing.ts";
import type { OrderRecord } from "../../fulfilment/order-view.ts";
import { CARRIER_EVENT_CHOICES } from "../../fulfilment/shipment-flow.ts";
import { documentedBody, iso, toJsonSchema } from "../json-schema.ts";
import { listSchemas, queryParam } from "../pagination.ts";

/** Wire schemas of the lab admin API's orders and billing (issue 4 §2 "Admin"). */

const isoOrNull = () => iso().nullable();
const text = () => z.string().nullable();

export const OrderOut = z.object({
  id: z.string().describe("The order's id: the hwi_device_id of a request, the replacement's id."),
  kind: z.enum(["device", "replacement"]),
  account_id: z.string(),
  client_domain: text(),
  hwi_device_id: z.string(),
  replacement_id: text(),
  status: z
    .string()
    .describe("The fulfilment status (spec 3); Unlinked once an unlink stopped the order."),
  reason: text().describe("Why Client Action Required holds it."),
  require_signature: z.boolean(),
  ship_gateway_only: z.boolean(),
  delivery_type: text(),
  ships_device: z.boolean().nullable().describe("A device is in the box (null until it ships)."),
  ships_gateway: z.boolean().nullable().describe("A gateway is in the box (null until it ships)."),
  hardware_uuid: text().describe("The gateway id or IMEI shipped."),
  carrier: text(),
  tracking_number: text(),
  tracking_link: text(),
  expected_delivery: isoOrNull(),
  next_status: text().describe("What the simulator does next (Picked Up: collected, silent)."),
  next_at: isoOrNull(),
  created_on: iso(),
  updated_on: iso(),
  shipped_on: isoOrNull(),
  delivered_on: isoOrNull(),
  delivered_via: text().describe("doorstep (Delivered) or pickup (collected from the carrier)."),
  signed_by: text(),
  halted: text().describe('Why it stopped before the end, e.g. "unlinked".'),
  removed: z.boolean().describe("Cancelled: the order is gone; this answer is its last trace."),
  history: z.array(
    z.object({
      status: z.string(),
      at: iso(),
      detail: z.string(),
      location: text(),
    }),
  ),
});

export const ORDER_JSON = toJsonSchema(OrderOut);

export const ORDER_LISTS = listSchemas(ORDER_JSON);

/** What the client does not read of an order: its account and the simulator's own plans. */
const ADMIN_ONLY = {
  account_id: true,
  client_domain: true,
  next_status: true,
  next_at: true,
  halted: true,
  removed: true,
} as const;

/**
 * An order's shipment as the client reads it (GET hwi-shipments/{id}/, spec 6.2 "shipment
 * tracking GET responses carry expected delivery dates, shipping timestamps and carrier status
 * details"): the admin view without ADMIN_ONLY.
 */
export const ShipmentTrackingOut = OrderOut.omit(ADMIN_ONLY);

export const SHIPMENT_TRACKING_JSON = toJsonSchema(ShipmentTrackingOut);

export function shipmentTrackingJson(o: OrderRecord): z.output<typeof ShipmentTrackingOut> {
  const json: Record<string, unknown> = orderJson(o);
  for (const key of Object.keys(ADMIN_ONLY)) delete json[key];
  return json as z.output<typeof ShipmentTrackingOut>;
}

const ms = (v: number | null) => (v === null ? null : toIsoMicros(v));

export function orderJson(o: OrderRecord): z.output<typeof OrderOut> {
  return {
    ...o,
    expected_delivery: ms(o.expected_delivery),
    next_at: ms(o.next_at),
    created_on: toIsoMicros(o.created_on),
    updated_on: toIsoMicros(o.updated_on),
    shipped_on: ms(o.shipped_on),
    delivered_on: ms(o.delivered_on),
    history: o.history.map((h) => ({ ...h, at: toIsoMicros(h.at) })),
  };
}

export const OrdersQuery = z.object({
  status: queryParam(
    "A fulfilment status (Unlinked: orders an unlink stopped), `shipped` (Dropshipped, In Transit, Out for Delivery) or `pending` (Client Action Required, On Hold, Ready to Ship), in any case.",
    { example: "pending" },
  ),
  account: queryParam("A client domain."),
  kind: queryParam("device (fulfilment requests) or replacement, in any case.", {
    example: "device",
  }),
});

/** Documentation only: src/fulfilment/orders.ts validates the bodies field by field. */
export const ADVANCE_BODY = documentedBody(
  drfObject({
    status: charField({ example: "Delivered" }).describe(
      "The status to reach. The order goes through every status on the carrier's way there, each with its webhook; Cancelled removes a pending order.",
    ),
    hardware_uuid: optionalText(
      "When the way passes Dropshipped: ship this gateway id or IMEI instead of a new one. A gateway already out there (shipped before, or with devices on it) is not in the box: the device joins it, and the gateway keeps its shipped_on (refused with ship_gateway_only).",
      "FED091A643FF",
    ),
    detail: optionalText("The carrier history's text for the last step."),
  }),
  "Move an order to a status.",
);

export const INJECT_BODY = documentedBody(
  drfObject({
    event: charField({ example: "scan" }).describe(`One of ${CARRIER_EVENT_CHOICES}; any case.`),
    detail: optionalText("The carrier history's text."),
    location: optionalText("Where it happened, e.g. Memphis, TN."),
  }),
  "A carrier event.",
);

export const OrderParams = z.object({ id: z.string().describe("The order's id.") });

export const BillingQuerySchema = z.object({
  account: queryParam("A client domain; every account when absent."),
  month: queryParam("A month, YYYY-MM (instead of from and to).", { example: "2024-10" }),
  from: queryParam("First day, YYYY-MM-DD (UTC); default the first of this month.", {
    example: "2024-10-01",
  }),
  to: queryParam("Last day, inclusive, YYYY-MM-DD; default the end of this month.", {
    example: "2024-10-31",
  }),
});

export const BillingOut = z.object({
  from: iso(),
  to: iso().describe("The day after the last one (exclusive)."),
  as_of: iso().describe("The lab's time: later days are not billed yet."),
  device_days: z.number().int(),
  accounts: z.array(
    z.object({
      account_id: z.string(),
      client_domain: z.string(),
      device_days: z.number().int(),
      devices: z.array(
        z.object({
          hwi_device_id: z.string(),
          device_name: text(),
          basis: z.enum(["activation", "delivery", "pickup"]),
          billable_from: iso(),
          billable_until: isoOrNull(),
          device_days: z.number().int(),
        }),
      ),
      hardware_shipped: z.object({ devices: z.number().int(), gateways: z.number().int() }),
      supplies: z
        .array(
          z.object({
            id: z.string(),
            supply_name: z.string(),
            shipped_on: iso(),
            up_front_cost: z.string(),
            shipping_cost: z.string(),
          }),
        )
        .describe("ASR supply orders shipped in the period (spec 1.4: charged as they ship)."),
      supply_charges: z.string().describe("Their up-front and shipping costs together (USD)."),
    }),
  ),
});

export const BILLING_JSON = toJsonSchema(BillingOut);

export function billingJson(r: BillingReport): z.output<typeof BillingOut> {
  return {
    ...r,
    from: toIsoMicros(r.from),
    to: toIsoMicros(r.to),
    as_of: toIsoMicros(r.as_of),
    accounts: r.accounts.map((a) => ({
      ...a,
      devices: a.devices.map((d) => ({
        ...d,
        billable_from: toIsoMicros(d.billable_from),
        billable_until: ms(d.billable_until),
      })),
      supplies: a.supplies.map((c) => ({ ...c, shipped_on: toIsoMicros(c.shipped_on) })),
    })),
  };
}
