import { z } from "zod";
import { replacementRecord } from "../../../fulfilment/replacements.ts";
import { accountOf } from "../../auth.ts";
import { orNotFound } from "../../errors.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  FIELD_ERRORS_SCHEMA,
} from "../../json-schema.ts";
import { listMode, paginate, paginationQuery, sendList } from "../../pagination.ts";
import {
  REPLACEMENT_BODY,
  REPLACEMENT_JSON_SCHEMA,
  REPLACEMENT_LISTS,
  replacementJson,
} from "../../schemas/replacement.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["hwi-replacements"];
const SECURITY = [{ ApiKey: [] }];
const NO_REPLACEMENT = "No Replacement matches the given query.";
const RECORD = describe(REPLACEMENT_JSON_SCHEMA, "A replacement order (fields: rpmlab's choice).");

/** hwi-replacements/ (spec 4.3 "replacement-order endpoint"; wire-formats "Replacements"). */
export const replacementsRoutes: RoutePlugin = async (app, ctx) => {
  const { replacements } = ctx.devices;

  app.post(
    "/hwi-replacements/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Request a replacement",
        description:
          'Replacement devices or gateways without a new device record or a duplicate-order flag (spec 4.3): the device keeps its record and status until the replacement ships. device_types holds "Gateway" and/or the device\'s own type. When a replacement gateway ships, hardware_uuid changes on every device of the old gateway (status Replaced, fulfilment webhook with device_id = the old gateway id). Only hardware the patient has is replaced: a device whose request has not shipped, is still on its way (Dropshipped, In Transit, Out for Delivery, Delivery Issue) or is unlinked is a 400 keyed hwi_device_id; a package held for pickup (Available for Pickup) can be replaced. With ship_gateway_only the patient has the device already: the device itself is replaced whatever the status of its order, and "Gateway" is a 400 keyed device_types until that gateway is delivered or held for pickup. Likewise a gateway (or the IMEI of a direct-cellular device) an earlier replacement shipped, or a gateway another device\'s request shipped that this device joined: while it is on its way, replacing it is a 400 keyed device_types. A second replacement of a gateway (or of a direct-cellular unit) while the first has not shipped (Ready to Ship, On Hold) is a duplicate order, refused with a 400 keyed device_types for any device on that gateway (replacements raise no duplicate-order flag, spec 4.3, so it is refused when ordered). So is a second replacement of the device itself while the first\'s device has not shipped or is on its way (400 keyed device_types); once it is delivered or held for pickup, the device can be replaced again. The path is beside the listing (spec: not shown). 201 with the record; 400 keyed by field.',
        body: REPLACEMENT_BODY,
        response: {
          201: RECORD,
          400: describe(FIELD_ERRORS_SCHEMA, "Keyed by field."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const row = await replacements.create(accountOf(request).id, request.body);
      return reply.code(201).send(replacementJson(replacementRecord(row)));
    },
  );

  app.get(
    "/hwi-replacements/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List replacements",
        description:
          "The full set, oldest first: a flat array of at most 1000 without page (spec 8), the envelope with page.",
        querystring: z.object(paginationQuery),
        response: {
          200: REPLACEMENT_LISTS.either,
          400: describe(FIELD_ERRORS_SCHEMA, "A bad page."),
          404: describe(DETAIL_SCHEMA, "A page past the end."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const body = await paginate(
        request,
        listMode(request.query),
        (options) => replacements.list(accountId, options),
        replacementJson,
        ctx.config.baseUrl,
      );
      return sendList(reply, body, REPLACEMENT_LISTS);
    },
  );

  app.get(
    "/hwi-replacements/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get a replacement",
        params: z.object({ id: z.string().describe("The replacement's id.") }),
        response: {
          200: RECORD,
          404: describe(DETAIL_SCHEMA, `"${NO_REPLACEMENT}"`),
          ...clientErrorResponses(),
        },
      },
    },
    async (request) => {
      const id = request.params.id.trim().toLowerCase();
      const record = await orNotFound(replacements.get(accountOf(request).id, id), NO_REPLACEMENT);
      return replacementJson(record);
    },
  );
};
