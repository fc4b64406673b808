import { z } from "zod";
import { supplyOrderJson, supplyOrderSearch } from "../../../asr/supply-order-view.ts";
import { MESSAGES } from "../../../core/drf-fields.ts";
import { isPlainObject } from "../../../core/field-errors.ts";
import type { SupplyRequestFilter } from "../../../store/types-asr.ts";
import { accountOf } from "../../auth.ts";
import { apiError } from "../../errors.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  FIELD_ERRORS_SCHEMA,
} from "../../json-schema.ts";
import { listMode, paginate, sendList } from "../../pagination.ts";
import {
  SUPPLY_ORDER_JSON,
  SUPPLY_ORDER_LISTS,
  SUPPLY_REQUEST_BODY,
  SUPPLY_REQUEST_DELETE_BODY,
  SupplyRequestDeleteQuery,
  SupplyRequestsQuery,
} from "../../schemas/supply-order.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["asr"];
const SECURITY = [{ ApiKey: [] }];
const NO_REQUEST = "No SupplyRequest matches the given query.";
const RECORD = describe(SUPPLY_ORDER_JSON, "A supply order.");
const DELETED = { type: "null", description: "Removed." } as const;

/** django-filter's BooleanFilter: true/false in any case, 1/0; blank is no filter. */
function fulfilledFilter(text: string | undefined): boolean | undefined {
  const value = text?.trim() ?? "";
  if (value === "") return undefined;
  if (["true", "1"].includes(value.toLowerCase())) return true;
  if (["false", "0"].includes(value.toLowerCase())) return false;
  throw apiError.field(
    "fulfilled",
    `Select a valid choice. ${value} is not one of the available choices.`,
  );
}

/** asr/supply-requests/ (spec 2.7, 3, 4.5). */
export const supplyRequestsRoutes: RoutePlugin = async (app, ctx) => {
  const { supplyRequests, supplies } = ctx;
  const render = (row: Parameters<typeof supplyOrderJson>[0]) => supplyOrderJson(row, supplies);

  app.post(
    "/supply-requests/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Order supplies",
        description:
          "201 with the order, status pending; it ships after the warehouse's processing time (1–2 business days; status fulfilled, carrier and tracking) and is delivered a few days later (delivered_on). Each step posts a SPECIAL_ORDER webhook with the order as this returns it. supply_name must equal a supply type's name exactly and not be deprecated; a type with hardware_uuid_required needs gateway_id (or imei) of hardware of this account with a device the supply fits; related_client_device_id must be a device of the account the supply fits, not an unlinked one. The order is billed at the end of the month it ships in (lab admin billing report). 400 keyed by field.",
        body: SUPPLY_REQUEST_BODY,
        response: {
          201: RECORD,
          400: describe(FIELD_ERRORS_SCHEMA, "Keyed by field."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const row = await supplyRequests.create(accountOf(request).id, request.body);
      return reply.code(201).send(render(row));
    },
  );

  app.get(
    "/supply-requests/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List supply orders",
        description:
          "Newest first (rpmlab's order, so that the flat array's 1000 (spec 8) are the latest), automatic reorders included. fulfilled=true: shipped orders only (spec 4.5); search: case-insensitive text in any field.",
        querystring: SupplyRequestsQuery,
        response: {
          200: SUPPLY_ORDER_LISTS.either,
          400: describe(FIELD_ERRORS_SCHEMA, "A bad page or fulfilled value."),
          404: describe(DETAIL_SCHEMA, "A page past the end."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const fulfilled = fulfilledFilter(request.query.fulfilled);
      const search = request.query.search?.trim();
      const filter: SupplyRequestFilter = {
        ...(fulfilled === undefined ? {} : { fulfilled }),
        ...(search === undefined || search === "" ? {} : supplyOrderSearch(search, supplies)),
      };
      const body = await paginate(
        request,
        listMode(request.query),
        (options) => supplyRequests.list(accountId, filter, options),
        render,
        ctx.config.baseUrl,
      );
      return sendList(reply, body, SUPPLY_ORDER_LISTS);
    },
  );

  app.delete(
    "/supply-requests/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Remove a pending supply request",
        description:
          'The spec names no identifier for it: the order\'s id goes in the query (`?id=`) or in a JSON body (`{"id": "…"}`); `DELETE supply-requests/{id}/` does the same. 204; 404 for an unknown id; 400 keyed `id` when it is missing or the order has shipped (spec 3: only pending requests can be deleted).',
        querystring: SupplyRequestDeleteQuery,
        body: SUPPLY_REQUEST_DELETE_BODY,
        response: {
          204: DELETED,
          400: describe(FIELD_ERRORS_SCHEMA, "No id, or the order shipped."),
          404: describe(DETAIL_SCHEMA, `"${NO_REQUEST}"`),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const fromBody = isPlainObject(request.body) ? request.body.id : undefined;
      if (fromBody !== undefined && typeof fromBody !== "string") {
        throw apiError.field("id", MESSAGES.string);
      }
      // A blank ?id= names nothing: the body's id then counts, as when the query has none.
      const query = request.query.id?.trim() === "" ? undefined : request.query.id;
      const id = query ?? fromBody;
      if (id === undefined || id.trim() === "") throw apiError.field("id", MESSAGES.required);
      await supplyRequests.delete(accountOf(request).id, id.trim().toLowerCase());
      return reply.code(204).send();
    },
  );

  app.get(
    "/supply-requests/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get a supply order",
        params: z.object({ id: z.string().describe("The order's id.") }),
        response: {
          200: RECORD,
          404: describe(DETAIL_SCHEMA, `"${NO_REQUEST}"`),
          ...clientErrorResponses(),
        },
      },
    },
    async (request) => {
      const row = await supplyRequests.get(
        accountOf(request).id,
        request.params.id.trim().toLowerCase(),
      );
      if (row === null) throw apiError.notFound(NO_REQUEST);
      return render(row);
    },
  );

  app.delete(
    "/supply-requests/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Remove a pending supply request",
        params: z.object({ id: z.string().describe("The order's id.") }),
        response: {
          204: DELETED,
          400: describe(FIELD_ERRORS_SCHEMA, "The order shipped."),
          404: describe(DETAIL_SCHEMA, `"${NO_REQUEST}"`),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      await supplyRequests.delete(accountOf(request).id, request.params.id.trim().toLowerCase());
      return reply.code(204).send();
    },
  );
};
