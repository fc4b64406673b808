import {
  deliveryDetail,
  deliveryDetailJson,
  deliveryFilter,
  deliveryJson,
  listDeliveries,
  resendDelivery,
  testWebhook,
} from "../../../app/webhook-log.ts";
import { TEST_DEVICE_ID } from "../../../webhooks/payloads/samples.ts";
import { DETAIL_SCHEMA, describe, FIELD_ERRORS_SCHEMA } from "../../json-schema.ts";
import { listMode, paginate, sendList } from "../../pagination.ts";
import { DomainParams } from "../../schemas/lab.ts";
import {
  DELIVERY_DETAIL_JSON,
  DELIVERY_LISTS,
  DeliveryParams,
  DeliveryQuery,
  WebhookParams,
} from "../../schemas/webhook-delivery.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["lab"];
const SECURITY = [{ AdminToken: [] }];
const ERRORS = { 401: DETAIL_SCHEMA, 403: DETAIL_SCHEMA };
const DETAIL = describe(DELIVERY_DETAIL_JSON, "The delivery, its body and every attempt.");
const NOT_FOUND = describe(DETAIL_SCHEMA, "Unknown client domain, delivery or webhook.");

/**
 * The webhook delivery log (issue 4 §1 "Inspection"), what the vendor's dashboard shows of its
 * webhooks: every delivery with its attempts, a resend button, a test button.
 */
export const labWebhookDeliveriesRoutes: RoutePlugin = async (app, ctx) => {
  const { store } = ctx;

  app.get(
    "/accounts/:clientDomain/webhook-deliveries/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List webhook deliveries",
        description:
          "Newest first, each with its latest attempt; a flat array of at most 1000 without page, the envelope with page. Finished deliveries are kept 7 days.",
        params: DomainParams,
        querystring: DeliveryQuery,
        response: {
          200: DELIVERY_LISTS.either,
          400: FIELD_ERRORS_SCHEMA,
          404: NOT_FOUND,
          ...ERRORS,
        },
      },
    },
    async (request, reply) => {
      const filter = deliveryFilter(request.query);
      const { clientDomain } = request.params;
      const body = await paginate(
        request,
        listMode(request.query),
        (page) => listDeliveries(store, clientDomain, filter, page),
        deliveryJson,
        ctx.config.baseUrl,
      );
      return sendList(reply, body, DELIVERY_LISTS);
    },
  );

  app.get(
    "/accounts/:clientDomain/webhook-deliveries/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get a webhook delivery",
        params: DeliveryParams,
        response: { 200: DETAIL, 404: NOT_FOUND, ...ERRORS },
      },
    },
    async (request) => {
      const { clientDomain, id } = request.params;
      return deliveryDetailJson(await deliveryDetail(store, clientDomain, id));
    },
  );

  app.post(
    "/accounts/:clientDomain/webhook-deliveries/:id/resend/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Resend a webhook delivery",
        description:
          "One attempt now, whatever the delivery's state: the same delivery id and body, to the webhook's endpoint and headers as they are now. A 2xx makes it delivered; a failure is logged and changes nothing else (a pending delivery keeps its schedule). The answer carries the attempt.",
        params: DeliveryParams,
        response: { 200: DETAIL, 404: NOT_FOUND, ...ERRORS },
      },
    },
    async (request) => {
      const { clientDomain, id } = request.params;
      return deliveryDetailJson(await resendDelivery(store, ctx.webhooks.manual, clientDomain, id));
    },
  );

  app.post(
    "/accounts/:clientDomain/webhooks/:id/test/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Send a test webhook",
        description: `A sample body of the webhook's kind about the fixed test device ${TEST_DEVICE_ID} (a blood pressure reading, a Dropshipped fulfilment, a shipped replacement order, an updated patient), sent now and logged as a test delivery (not retried). 201 with the delivery and its attempt, whatever the endpoint answered.`,
        params: WebhookParams,
        response: { 201: DETAIL, 404: NOT_FOUND, ...ERRORS },
      },
    },
    async (request, reply) => {
      const { clientDomain, id } = request.params;
      const detail = await testWebhook(store, ctx.webhooks.manual, clientDomain, id);
      return reply.code(201).send(deliveryDetailJson(detail));
    },
  );
};
