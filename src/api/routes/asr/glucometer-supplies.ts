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
    errors.add("non_field_errors", MESSAGES.dictionary(body));
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

  app.get(
    "/glucometer_supplies/:hardware_uuid/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "A glucometer's strip estimate",
        description:
          "strips_sent: the meter's own box (50 strips) plus the strips of shipped strip orders for this hardware; estimated_strips_remaining: strips_sent minus the glucose readings its glucometer stored, plus the offset of the last PUT, never below 0; average_measurements_per_day: glucose readings per day over the last 14 days. 404 when no glucometer of the account is on the gateway id or IMEI.",
        params: PARAMS,
        response: {
          200: RECORD,
          404: describe(DETAIL_SCHEMA, `"${NO_GLUCOMETER}"`),
          ...clientErrorResponses(),
        },
      },
    },
    async (request) => {
      const current = await glucometerSupplies(
        store,
        supplies,
        accountOf(request).id,
        request.params.hardware_uuid,
        clock.now(),
      );
      if (current === null) throw apiError.notFound(NO_GLUCOMETER);
      return current.record;
    },
  );

  app.put(
    "/glucometer_supplies/:hardware_uuid/",
    {
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
      const accountId = accountOf(request).id;
      const lookUp = (tx: StoreRepositories) =>
        glucometerSupplies(tx, supplies, accountId, request.params.hardware_uuid, clock.now());
      // DRF's order: the object first (404), then the body (400).
      if ((await lookUp(store)) === null) throw apiError.notFound(NO_GLUCOMETER);
      const remaining = readRemaining(request.body);
      return store.transaction(async (tx) => {
        const current = await lookUp(tx);
        if (current === null) throw apiError.notFound(NO_GLUCOMETER);
        await setStripsRemaining(tx, current, accountId, remaining);
        return (await lookUp(tx))!.record;
      });
    },
  );
};
