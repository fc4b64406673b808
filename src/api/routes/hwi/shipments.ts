import { isUuid } from "../../../fulfilment/identifiers.ts";
import { accountOf } from "../../auth.ts";
import { apiError, orNotFound } from "../../errors.ts";
import { clientErrorResponses, DETAIL_SCHEMA, describe } from "../../json-schema.ts";
import { OrderParams, SHIPMENT_TRACKING_JSON, shipmentTrackingJson } from "../../schemas/orders.ts";
import type { RoutePlugin } from "../../types.ts";

const NO_SHIPMENT = "No Shipment matches the given query.";

/**
 * GET hwi-shipments/{id}/ (spec 6.2: "shipment tracking GET responses carry expected delivery
 * dates, shipping timestamps and carrier status details"; its path is not shown, rpmlab names
 * it beside hwi-replacements). Fulfilment webhooks are not retried (spec 6.1): a client that
 * missed one reads the tracking link and carrier history here.
 */
export const shipmentsRoutes: RoutePlugin = async (app, ctx) => {
  app.get(
    "/hwi-shipments/:id/",
    {
      schema: {
        tags: ["hwi-devices"],
        security: [{ ApiKey: [] }],
        summary: "Track a shipment",
        description:
          "The shipment of a device request (id: its hwi_device_id) or of a replacement (id: the replacement's id): status, carrier, tracking number and link, expected delivery, shipped_on and delivered_on, who signed, and the carrier history, oldest first. A cancelled order is gone (404).",
        params: OrderParams,
        response: {
          200: describe(SHIPMENT_TRACKING_JSON, "The shipment with its carrier history."),
          404: describe(DETAIL_SCHEMA, "No shipment of this account has that id."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request) => {
      const id = request.params.id.trim().toLowerCase();
      // Order ids are UUIDs (a request's hwi_device_id, a replacement's id).
      if (!isUuid(id)) throw apiError.notFound(NO_SHIPMENT);
      const order = await orNotFound(ctx.devices.orders.get(id), NO_SHIPMENT);
      // Another account's order is not this client's to see, nor to learn exists.
      if (order.account_id !== accountOf(request).id) throw apiError.notFound(NO_SHIPMENT);
      return shipmentTrackingJson(order);
    },
  );
};
