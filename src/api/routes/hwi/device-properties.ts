import { z } from "zod";
import { charField, drfObject } from "../../../core/drf-fields.ts";
import type { RpmlabError } from "../../../core/errors.ts";
import { MEASUREMENT_WEBHOOK_ID } from "../../../fulfilment/device-properties.ts";
import { accountOf } from "../../auth.ts";
import { BODY_IGNORED } from "../../content-types.ts";
import { apiError, orNotFound } from "../../errors.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  documentedBody,
  FIELD_ERRORS_SCHEMA,
  toJsonSchema,
} from "../../json-schema.ts";
import { lookupFirst } from "../../lookup-first.ts";
import { deviceIdOf, knownDevice, NO_DEVICE } from "../../services/lookups.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["hwi-devices"];
const SECURITY = [{ ApiKey: [] }];
const NO_PROPERTY = "No DeviceProperty matches the given query.";

const PropertyOut = z.object({ key: z.string(), value: z.string() });
const PROPERTY = describe(toJsonSchema(PropertyOut), "A device property.");
const PROPERTIES = describe(
  toJsonSchema(z.array(PropertyOut)),
  "Every property of the device, in key order (never paginated: a device has few).",
);
const BODY = documentedBody(
  drfObject({
    key: charField({ maxLength: 100 }).describe("Free text, at most 100 characters."),
    value: charField({ allowBlank: true }).describe(
      `Text. For ${MEASUREMENT_WEBHOOK_ID}: the UUID of one of the account's MEASUREMENT webhooks, or "" to send to every webhook again (spec 6.3.2).`,
    ),
  }),
  "The property to set: created, or its value replaced when the key exists.",
);
const invalid = describe(FIELD_ERRORS_SCHEMA, "Validation error keyed by field (key, value).");
const deviceOnly = describe(DETAIL_SCHEMA, `Unknown hwi_device_id: "${NO_DEVICE}"`);
const deviceOrKey = describe(
  DETAIL_SCHEMA,
  `Unknown hwi_device_id ("${NO_DEVICE}") or key ("${NO_PROPERTY}").`,
);
const params = z.object({ id: z.string().describe("The hwi_device_id (UUID, any case).") });
const keyParams = params.extend({ key: z.string().describe("The property's key, exactly.") });

const SETS = `Sets one property from {"key", "value"}: creates it, or replaces the value of an existing key. Keys are free text; ${MEASUREMENT_WEBHOOK_ID} (every device type, spec 2.8) must name a MEASUREMENT webhook of the account by UUID, and "" restores sending to all webhooks (spec 6.3.2; stored as "").`;

/** What was missing, as Django words it. */
const missing = (error: RpmlabError) => (error.details.key === undefined ? NO_DEVICE : NO_PROPERTY);

/**
 * hwi-devices/{id}/properties/ (spec 2.4 `properties`; wire-formats "Webhook registry": the
 * key/value list of per-device routing). Paths are rpmlab's (spec: not shown): the list takes
 * GET, and POST or PUT of one {key, value}; one key is `properties/{key}/` (GET, DELETE).
 */
export const devicePropertiesRoutes: RoutePlugin = async (app, ctx) => {
  const { properties } = ctx.devices;

  app.get(
    "/hwi-devices/:id/properties/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List a device's properties",
        params,
        response: { 200: PROPERTIES, 404: deviceOnly, ...clientErrorResponses() },
      },
    },
    async (request) =>
      orNotFound(properties.list(accountOf(request).id, deviceIdOf(request.params.id)), NO_DEVICE),
  );

  for (const method of ["POST", "PUT"] as const) {
    app.route({
      method,
      url: "/hwi-devices/:id/properties/",
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: `Set a device property (${method})`,
        description: `${SETS} POST answers 201, PUT 200; both take and return the same {key, value}.`,
        params,
        body: BODY,
        response: {
          [method === "POST" ? 201 : 200]: PROPERTY,
          400: invalid,
          404: deviceOnly,
          ...clientErrorResponses(),
        },
      },
      preParsing: lookupFirst(({ id }, request) =>
        knownDevice(ctx, accountOf(request).id, id ?? ""),
      ),
      handler: async (request, reply) => {
        const { id } = request.params as z.output<typeof params>;
        const set = properties.set(accountOf(request).id, deviceIdOf(id), request.body);
        return reply.code(method === "POST" ? 201 : 200).send(await orNotFound(set, NO_DEVICE));
      },
    });
  }

  app.get(
    "/hwi-devices/:id/properties/:key/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get one device property",
        params: keyParams,
        response: { 200: PROPERTY, 404: deviceOrKey, ...clientErrorResponses() },
      },
    },
    async (request) => {
      const { id, key } = request.params;
      const all = await orNotFound(
        properties.list(accountOf(request).id, deviceIdOf(id)),
        NO_DEVICE,
      );
      const found = all.find((p) => p.key === key);
      if (found === undefined) throw apiError.notFound(NO_PROPERTY);
      return found;
    },
  );

  app.delete(
    "/hwi-devices/:id/properties/:key/",
    {
      // DRF's destroy never reads request.data: a body of any type is ignored.
      config: BODY_IGNORED,
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Delete one device property",
        description: `204 with no body. To route ${MEASUREMENT_WEBHOOK_ID} back to every webhook, setting it to "" does the same (spec 6.3.2).`,
        params: keyParams,
        response: {
          204: { type: "null", description: "Deleted; no body." },
          404: deviceOrKey,
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const { id, key } = request.params;
      await orNotFound(properties.delete(accountOf(request).id, deviceIdOf(id), key), missing);
      return reply.code(204).send();
    },
  );
};
