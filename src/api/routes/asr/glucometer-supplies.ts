import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { glucometerSupplies, setStripsRemaining } from "../../../asr/strip-estimate.ts";
import { integerField, MESSAGES } from "../../../core/drf-fields.ts";
import { FieldErrorCollector, isPlainObject } from "../../../core/field-errors.ts";
import type { StoreRepositories } from "../../../store/store.ts";
import { accountOf } from "../../auth.ts";
import { apiError } from "../../errors.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  FIELD_ERRORS_SCHEMA,
} from "../../json-schema.ts";
import { lookupFirst } from "../../lookup-first.ts";
import { GLUCOMETER_SUPPLIES_BODY, GLUCOMETER_SUPPLIES_JSON } from "../../schemas/supply-order.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["asr"];
const SECURITY = [{ ApiKey: [] }];
const NO_GLUCOMETER = "No glucometer of this account is on this gateway id or IMEI.";
const PARAMS = z.object({
  hardware_uuid: z.string().describe("Gateway id or IMEI (any case; hyphens ignored)."),
});
const RECORD = describe(GLUCOMETER_SUPPLIES_JSON, "The glucometer supply record.");

const REMAINING = integerField({ min: 0 });

/** estimated_strips_remaining: DRF IntegerField(min_value=0). */
function readRemaining(body: unknown): number {
  const errors = new FieldErrorCollector();
  if (!isPlainObject(body)) {
    errors.add("non_field_errors", body === null ? MESSAGES.noData : MESSAGES.dictionary(body));
    errors.throwIfAny();
  }
  const result = REMAINING.safeParse((body as Record<string, unknown>).estimated_strips_remaining);
  if (!result.success) errors.addIssues("estimated_strips_remaining", result.error.issues);
  errors.throwIfAny();
  return result.data!;
}

/** asr/glucometer_supplies/{hardware_uuid}/ (spec 2.7, 4.5; wire-formats "ASR"). */
export const glucometerSuppliesRoutes: RoutePlugin = async (app, ctx) => {
  const { store, supplies, clock } = ctx;
  /** The record of the hardware the path names, read in `tx`; the route's 404 when none. */
  const found = async (
    request: FastifyRequest,
    hardware: string,
    tx: StoreRepositories = store,
  ) => {
    const current = await glucometerSupplies(
      tx,
      supplies,
      accountOf(request).id,
      hardware,
      clock.now(),
    );
    if (current === null) throw apiError.notFound(NO_GLUCOMETER);
    return current;
  };

  app.get(
    "/glucometer_supplies/:hardware_uuid/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "A glucometer's strip estimate",
        description:
          "strips_sent: the meter's own box (50 strips), another for each replacement meter shipped for it, plus the strips of shipped strip orders for the meter (on this gateway id or IMEI, or on one it was on before a replacement); estimated_strips_remaining: strips_sent minus the glucose readings its glucometer stored, plus the offset of the last PUT, never below 0; average_measurements_per_day: glucose readings per day over the last 14 days (a meter first read more recently: the readings after its first per day since it, not rounded up to whole days). 404 when no glucometer of the account is on the gateway id or IMEI.",
        params: PARAMS,
        response: {
          200: RECORD,
          404: describe(DETAIL_SCHEMA, `"${NO_GLUCOMETER}"`),
          ...clientErrorResponses(),
        },
      },
    },
    async (request) => (await found(request, request.params.hardware_uuid)).record,
  );

  app.put(
    "/glucometer_supplies/:hardware_uuid/",
    {
      // DRF's order: the object first (404), then the body (415, 400).
      preParsing: lookupFirst(({ hardware_uuid = "" }, request) => found(request, hardware_uuid)),
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Set the strips remaining",
        description:
          "For strips lost, supplied by the client or bought by the patient: the estimate becomes this value now and counts down from it with each glucose reading; the account's automatic reorder (if set) goes by it. 200 with the updated record; 400 keyed estimated_strips_remaining.",
        params: PARAMS,
        body: GLUCOMETER_SUPPLIES_BODY,
        response: {
          200: RECORD,
          400: describe(FIELD_ERRORS_SCHEMA, "Keyed by field."),
          404: describe(DETAIL_SCHEMA, `"${NO_GLUCOMETER}"`),
          ...clientErrorResponses(),
        },
      },
    },
    async (request) => {
      const remaining = readRemaining(request.body);
      const hardware = request.params.hardware_uuid;
      return store.transaction(async (tx) => {
        await setStripsRemaining(
          tx,
          await found(request, hardware, tx),
          accountOf(request).id,
          remaining,
        );
        return (await found(request, hardware, tx)).record;
      });
    },
  );
};
