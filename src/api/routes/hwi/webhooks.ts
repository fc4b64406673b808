import { z } from "zod";
import { accountOf } from "../../auth.ts";
import { BODY_IGNORED } from "../../content-types.ts";
import { apiError } from "../../errors.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  FIELD_ERRORS_SCHEMA,
} from "../../json-schema.ts";
import { lookupFirst } from "../../lookup-first.ts";
import { listMode, paginate, paginationQuery, sendList } from "../../pagination.ts";
import {
  headerMissing,
  keyMissing,
  NEEDS_HEADER,
  NEEDS_KEY,
  newWebhook,
  setsSecret,
  WEBHOOK_JSON_SCHEMA,
  WEBHOOK_LISTS,
  WebhookBody,
  WebhookPatchBody,
  webhookJson,
  webhookPatch,
} from "../../schemas/webhook.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["webhooks"];
const SECURITY = [{ ApiKey: [] }];
const NO_WEBHOOK = "No Webhook matches the given query.";
const WEBHOOK = describe(WEBHOOK_JSON_SCHEMA, 'A webhook (wire-formats "Webhook registry").');
const invalid = describe(
  FIELD_ERRORS_SCHEMA,
  'Keyed by field, e.g. {"endpoint": ["Enter a valid URL."]} for anything but an absolute http(s) URL.',
);
const notFound = describe(DETAIL_SCHEMA, `Unknown id: "${NO_WEBHOOK}"`);
const params = z.object({ id: z.string().describe("The webhook's id (UUID, any case).") });
/**
 * Webhooks an account may hold (rpmlab's decision; the real service's are entered in its web
 * application, a handful per client). Every reading is posted to each enabled MEASUREMENT
 * webhook: without a bound, one key's POSTs in a loop would make each reading thousands of
 * requests to whatever endpoint they name, and as many delivery rows in the store.
 */
export const MAX_WEBHOOKS = 100;
const TOO_MANY_WEBHOOKS = `This account already has ${MAX_WEBHOOKS} webhooks, the most it may hold: delete one first.`;
const DELIVERY =
  'Delivery is described in the README ("Webhooks"): payloads, routing, retries, signatures; its log, resends and test sends are in the lab admin API.';

/** {hwi}/webhooks/ (wire-formats "Webhook registry"; spec 6.1, 6.3: "not shown"). */
export const webhooksRoutes: RoutePlugin = async (app, ctx) => {
  const { webhooks } = ctx.store;
  const existing = async (accountId: string, id: string) => {
    const row = await webhooks.get(accountId, id.trim().toLowerCase());
    if (row === null) throw apiError.notFound(NO_WEBHOOK);
    return row;
  };
  const knownWebhook = lookupFirst(({ id }, request) => existing(accountOf(request).id, id ?? ""));

  app.get(
    "/webhooks/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List webhooks",
        description: `Oldest first: a flat array without page, the envelope with page. ${DELIVERY}`,
        querystring: z.object(paginationQuery),
        response: {
          200: WEBHOOK_LISTS.either,
          400: invalid,
          404: describe(DETAIL_SCHEMA, "A page past the end."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const all = await webhooks.list(accountOf(request).id);
      const body = await paginate(
        request,
        listMode(request.query),
        async ({ limit, offset = 0 }) => ({
          rows: all.slice(offset, limit === undefined ? undefined : offset + limit),
          total: all.length,
        }),
        (row) => webhookJson(row),
        ctx.config.baseUrl,
      );
      return sendList(reply, body, WEBHOOK_LISTS);
    },
  );

  app.post(
    "/webhooks/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Register a webhook",
        description: `201 with the webhook. event defaults to MEASUREMENT, post_as_array to false, enabled_by_default to true (spec 6.3.1). An account holds at most ${MAX_WEBHOOKS} webhooks: one more is a 400 under non_field_errors. ${DELIVERY}`,
        body: WebhookBody,
        response: {
          201: WEBHOOK,
          400: describe(
            FIELD_ERRORS_SCHEMA,
            `Keyed by field, e.g. {"endpoint": ["Enter a valid URL."]}; {"non_field_errors": […]} when the account already holds ${MAX_WEBHOOKS} webhooks.`,
          ),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      if ((await webhooks.list(accountId)).length >= MAX_WEBHOOKS) {
        throw apiError.validation({ non_field_errors: [TOO_MANY_WEBHOOKS] });
      }
      const row = await webhooks.create(accountId, newWebhook(request.body));
      return reply.code(201).send(webhookJson(row, setsSecret(request.body)));
    },
  );

  app.get(
    "/webhooks/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get a webhook",
        params,
        response: { 200: WEBHOOK, 404: notFound, ...clientErrorResponses() },
      },
    },
    async (request) => webhookJson(await existing(accountOf(request).id, request.params.id)),
  );

  app.put(
    "/webhooks/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Replace a webhook",
        description:
          'The whole webhook: fields left out return to their defaults. signing_secret null (as reads show it) keeps the secret, so a webhook read and written back stays signed; false or "" turns signing off.',
        params,
        body: WebhookBody,
        response: { 200: WEBHOOK, 400: invalid, 404: notFound, ...clientErrorResponses() },
      },
      preParsing: knownWebhook,
    },
    async (request) => {
      const accountId = accountOf(request).id;
      const current = await existing(accountId, request.params.id);
      const body = newWebhook(request.body, current.signingSecret);
      const row = await webhooks.update(accountId, current.id, body);
      return webhookJson(row, setsSecret(request.body));
    },
  );

  app.patch(
    "/webhooks/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Update some fields of a webhook",
        params,
        body: WebhookPatchBody,
        response: { 200: WEBHOOK, 400: invalid, 404: notFound, ...clientErrorResponses() },
      },
      preParsing: knownWebhook,
    },
    async (request) => {
      const accountId = accountOf(request).id;
      const current = await existing(accountId, request.params.id);
      const patch = webhookPatch(request.body);
      const merged = {
        auth_header: patch.authHeader === undefined ? current.authHeader : patch.authHeader,
        auth_key: patch.authKey === undefined ? current.authKey : patch.authKey,
      };
      if (headerMissing(merged)) throw apiError.field("auth_header", NEEDS_HEADER);
      if (keyMissing(merged)) throw apiError.field("auth_key", NEEDS_KEY);
      const row = await webhooks.update(accountId, current.id, patch);
      return webhookJson(row, setsSecret(request.body));
    },
  );

  app.delete(
    "/webhooks/:id/",
    {
      // DRF's destroy never reads request.data: a body of any type is ignored.
      config: BODY_IGNORED,
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Delete a webhook",
        description:
          '204 with no body. Devices whose measurement_webhook_id names it keep the property; set it to "" to route them to every webhook again (spec 6.3.2).',
        params,
        response: {
          204: { type: "null", description: "Deleted; no body." },
          404: notFound,
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const current = await existing(accountId, request.params.id);
      await webhooks.delete(accountId, current.id);
      return reply.code(204).send();
    },
  );
};
