import { z } from "zod";
import { accountOf } from "../../auth.ts";
import { orNotFound } from "../../errors.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  FIELD_ERRORS_SCHEMA,
} from "../../json-schema.ts";
import { listMode, paginate, paginationQuery, queryParam, sendList } from "../../pagination.ts";
import {
  GATEWAY_INFO_JSON_SCHEMA,
  GATEWAY_LISTS,
  gatewayInfoJson,
  gatewayListItemJson,
} from "../../schemas/gateway.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["hwi-gateways"];
const SECURITY = [{ ApiKey: [] }];
export const NO_GATEWAY = "No Gateway matches the given query.";

const QUERY = {
  ordering: queryParam(
    "assigned_on, shipped_on or last_measurement, prefixed with - for descending; one field. Nulls sort last ascending, first descending. Default: the order gateways were first seen.",
    { example: "-last_measurement" },
  ),
  last_measurement__isnull: queryParam(
    "true: gateways that never sent a measurement; false: those that did (true/false, 1/0, any case).",
    { example: "true" },
  ),
  shipped_on__isnull: queryParam("false: dropshipped gateways; true: the others.", {
    example: "false",
  }),
  ...paginationQuery,
};

/** hwi-gateways/ and gateway-info/{gateway_uuid}/ (spec 2.2, 2.3, 4.2). */
export const gatewaysRoutes: RoutePlugin = async (app, ctx) => {
  const { gateways } = ctx.devices;

  app.get(
    "/hwi-gateways/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List the account's gateways",
        description:
          "Always the paginated envelope, with or without page (spec 4.2 says it returns the paginated envelope; wire-formats shows it for ?ordering=-last_measurement&page_size=100 without page). A bad ordering or isnull value is a 400 keyed by its parameter.",
        querystring: z.object(QUERY),
        response: {
          200: describe(GATEWAY_LISTS.envelope, "The paginated envelope (spec 2.6)."),
          400: describe(FIELD_ERRORS_SCHEMA, "Keyed ordering, last_measurement__isnull, …"),
          404: describe(DETAIL_SCHEMA, "A page past the end."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const body = await paginate(
        request,
        listMode(request.query, { alwaysPaginated: true }),
        (options) => gateways.list(accountId, request.query, options),
        gatewayListItemJson,
        ctx.config.baseUrl,
      );
      return sendList(reply, body, GATEWAY_LISTS);
    },
  );

  app.get(
    "/gateway-info/:gatewayUuid/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Gateway info",
        description: `The gateway id without hyphens, matched ignoring case (hyphens are stripped if sent). 404 "${NO_GATEWAY}" until the gateway is associated with the account: a device activated on it once the lab knows it, or a shipment (spec 4.2, 7.3).`,
        params: z.object({ gatewayUuid: z.string().describe("12 hex characters.") }),
        response: {
          200: describe(GATEWAY_INFO_JSON_SCHEMA, "Gateway info (spec 2.3)."),
          404: describe(DETAIL_SCHEMA, "Not associated with the account."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request) => {
      const info = gateways.info(accountOf(request).id, request.params.gatewayUuid);
      return gatewayInfoJson(await orNotFound(info, NO_GATEWAY));
    },
  );
};
