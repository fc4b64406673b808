import { z } from "zod";
import { FULFILMENT_STATUSES } from "../fulfilment/statuses.ts";
import { WEBHOOK_EVENTS } from "../store/types-ingest.ts";
import { DELIVERY_STATES } from "../store/types-webhooks.ts";
import { apiPath, comparator, localId } from "./fields.ts";

/**
 * What must hold at the end of a run. Each item of `expect` has exactly one kind key (readings,
 * webhooks, fulfilment, api) and an optional `text` that replaces the generated description.
 */

/** Counters of the readings ledger an expectation can compare. */
export const READING_COUNTERS = [
  "taken",
  "stored",
  "lost_by_design",
  "returned_with_unit",
  "held_at_end",
  "dropped_full",
  "missing",
  "duplicates_stored",
  "duplicates_suppressed",
] as const;
export type ReadingCounter = (typeof READING_COUNTERS)[number];

const readingsExpectation = z
  .strictObject({
    taken: comparator
      .optional()
      .meta({ description: "Readings the devices took (one per physical reading)" }),
    stored: comparator.optional().meta({ description: "Readings stored by ingestion" }),
    lost_by_design: comparator
      .optional()
      .meta({ description: "Readings lost as the device model says (no offline store)" }),
    returned_with_unit: comparator.optional().meta({
      description:
        "Readings a replaced unit still held when it went back to the vendor (never sent)",
    }),
    held_at_end: comparator.optional().meta({
      description:
        "Readings a device or an outbox still held when the run and its drain ended (not sent yet)",
    }),
    dropped_full: comparator.optional().meta({
      description:
        "Readings a full device store or outbox dropped, the oldest first, as real ones do (never sent)",
    }),
    missing: comparator.optional().meta({
      description:
        "Readings neither stored, lost by design, returned with a unit, held at the end nor dropped by a full store (a fault of the lab)",
    }),
    duplicates_stored: comparator
      .optional()
      .meta({ description: "Readings stored more than once" }),
    duplicates_suppressed: comparator
      .optional()
      .meta({ description: "Re-sent readings ingestion recognised and dropped" }),
  })
  .refine(
    (r) => Object.values(r).some((v) => v !== undefined),
    `name at least one counter: ${READING_COUNTERS.join(", ")}`,
  )
  // The same rule in JSON Schema's words, so editors flag `readings: {}` too.
  .meta({ minProperties: 1 });

const webhooksExpectation = z.strictObject({
  kind: z.enum(WEBHOOK_EVENTS),
  status: z.enum(DELIVERY_STATES).default("delivered"),
  count: comparator,
  webhook: localId
    .optional()
    .meta({ description: "Only deliveries to this webhook of the scenario" }),
});

const fulfilmentExpectation = z.strictObject({
  status: z.enum(FULFILMENT_STATUSES).meta({ description: "Orders that reached this status" }),
  count: comparator,
});

const apiExpectation = z.strictObject({
  account: localId.meta({ description: "Id of the account whose client sends the query" }),
  get: apiPath,
  status: z
    .number()
    .int()
    .min(100)
    .max(599)
    .default(200)
    .meta({ description: "Expected HTTP status" }),
  count: comparator.optional().meta({
    description:
      "Items in the answer: `count` of a paginated envelope (every page), or a flat array's length",
  }),
});

const EXPECTATION_KINDS = ["readings", "webhooks", "fulfilment", "api"] as const;

export const expectationSchema = z
  .strictObject({
    text: z.string().min(1).optional().meta({ description: "Shown instead of the generated text" }),
    readings: readingsExpectation.optional(),
    webhooks: webhooksExpectation.optional(),
    fulfilment: fulfilmentExpectation.optional(),
    api: apiExpectation.optional(),
  })
  .refine(
    (e) => EXPECTATION_KINDS.filter((kind) => e[kind] !== undefined).length === 1,
    `an expectation has exactly one of ${EXPECTATION_KINDS.join(", ")}`,
  )
  // The same rule in JSON Schema's words, so editors flag a second kind key too.
  .meta({ oneOf: EXPECTATION_KINDS.map((kind) => ({ required: [kind] })) });
export type RawExpectation = z.output<typeof expectationSchema>;
