import { CARRIER_EVENT_NAMES } from "../../../fulfilment/shipment-flow.ts";
import { orNotFound } from "../../errors.ts";
import { DETAIL_SCHEMA, describe, FIELD_ERRORS_SCHEMA } from "../../json-schema.ts";
import { listMode, paginate, paginationQuery, sendList } from "../../pagination.ts";
import {
  ADVANCE_BODY,
  BILLING_JSON,
  BillingQuerySchema,
  billingJson,
  INJECT_BODY,
  ORDER_JSON,
  ORDER_LISTS,
  OrderParams,
  OrdersQuery,
  orderJson,
} from "../../schemas/orders.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["lab"];
const SECURITY = [{ AdminToken: [] }];
const AUTH = { 401: DETAIL_SCHEMA, 403: DETAIL_SCHEMA };
const ORDER = describe(ORDER_JSON, "The order with its carrier history.");
const NOT_FOUND = describe(DETAIL_SCHEMA, "No order has that id.");
const INVALID = describe(FIELD_ERRORS_SCHEMA, "Keyed by field, saying why.");
const notFound = (id: string) => `No order has id "${id}".`;

/**
 * /lab/v1/orders/ and /lab/v1/billing/ (issue 4 §2 "Admin"): what the vendor's fulfilment team
 * and billing would see. The fulfilment simulator of the running lab owns the timers; these
 * routes move orders through the same transitions (and the simulator carries on from there).
 */
export const labOrdersRoutes: RoutePlugin = async (app, ctx) => {
  const { orders } = ctx.devices;

  app.get(
    "/orders/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List orders (fulfilment requests and replacements)",
        description:
          "Oldest first; a flat array of at most 1000 without page, the envelope with page. Each order carries its shipment: status, contents, carrier, tracking link, expected delivery, the simulator's next step, and its carrier history.",
        querystring: OrdersQuery.extend(paginationQuery),
        response: { 200: ORDER_LISTS.either, 400: INVALID, 404: DETAIL_SCHEMA, ...AUTH },
      },
    },
    async (request, reply) => {
      const { status, account, kind } = request.query;
      const body = await paginate(
        request,
        listMode(request.query),
        (page) => orders.list({ status, account, kind }, page),
        orderJson,
        ctx.config.baseUrl,
      );
      return sendList(reply, body, ORDER_LISTS);
    },
  );

  app.get(
    "/orders/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get an order",
        params: OrderParams,
        response: { 200: ORDER, 404: NOT_FOUND, ...AUTH },
      },
    },
    async (request) => {
      const { id } = request.params;
      return orderJson(await orNotFound(orders.get(id), notFound(id)));
    },
  );

  app.post(
    "/orders/:id/advance/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Move an order to a status",
        description:
          "Through every status a carrier would pass on the way (Ready to Ship → Delivered fires Dropshipped, In Transit, Out for Delivery, Delivered), each with its webhook, at the lab's current time. Only moves a carrier could make: anything else is a 400 keyed status that says why and what is possible. Cancelled removes a pending order (spec 3); the answer is then its last trace (removed: true).",
        params: OrderParams,
        body: ADVANCE_BODY,
        response: { 200: ORDER, 400: INVALID, 404: NOT_FOUND, ...AUTH },
      },
    },
    async (request) => {
      const { id } = request.params;
      return orderJson(await orNotFound(orders.advance(id, request.body), notFound(id)));
    },
  );

  app.post(
    "/orders/:id/events/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Inject a carrier event",
        description: `One event: ${CARRIER_EVENT_NAMES.join(", ")}. scan fires In Transit, held_at_facility Available for Pickup (Delivered never fires for it, spec 6.2), picked_up fires no webhook (the hardware is with the patient: billing starts). Also by the status it fires, as the webhook spells it (In Transit for scan), in any case. A 400 keyed event when the carrier could not make it now.`,
        params: OrderParams,
        body: INJECT_BODY,
        response: { 200: ORDER, 400: INVALID, 404: NOT_FOUND, ...AUTH },
      },
    },
    async (request) => {
      const { id } = request.params;
      return orderJson(await orNotFound(orders.inject(id, request.body), notFound(id)));
    },
  );

  app.get(
    "/billing/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "What the vendor would bill: device-days per account over a period",
        description:
          "A device bills from activation when the hardware was in hand, from delivery (or pickup) when the lab shipped it (a device that joined the patient's gateway, or was activated on it, while that was in the mail: from the gateway's delivery, as it needs both), or of the replacement that completes it (the device and, unless direct-cellular, the gateway it is on, both with the patient) when its own package never reached the patient, until unlinked (spec 4.2); on a gateway id the lab had never seen (Unknown Gateway ID), from that gateway's first check-in. A device-day is a UTC day on which the device was billable at any moment; days after the lab's clock are not billed yet. hardware_shipped counts the devices and gateways that shipped in the period (ship_gateway_only: the gateway only). supplies: the ASR supply orders that shipped in the period, at their prices when ordered, and supply_charges their total (spec 1.4: supply charges accrue as orders ship and are billed at the end of the month; ask for month=YYYY-MM). from or to alone: the other is the first or last day of this month; a period that ends before it begins is a 400 keyed by the day sent (to, when both are).",
        querystring: BillingQuerySchema,
        response: { 200: BILLING_JSON, 400: INVALID, ...AUTH },
      },
    },
    async (request) => billingJson(await ctx.devices.billing(request.query)),
  );
};
