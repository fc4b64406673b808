import { z } from "zod";
import { REPLAY_RESULTS } from "../../app/dead-letters.ts";
import { booleanField } from "../../core/drf-fields.ts";
import { iso, toJsonSchema } from "../json-schema.ts";
import { listSchemas, paginationQuery, queryParam } from "../pagination.ts";

/** Wire schemas of the dead letters (lab admin API; src/app/dead-letters.ts renders). */

export const DeadLetterOut = z.object({
  id: z.number().int(),
  topic: z.string().describe("The MQTT topic it was published on."),
  message_id: z
    .string()
    .nullable()
    .describe("The envelope's message_id, when the payload still names one."),
  reason: z
    .string()
    .describe(
      "Why ingestion could not use it, naming the field or byte, e.g. `readings.0: E_CODEC_TRUNCATED: …`; one per failed reading, joined by `; `.",
    ),
  received: iso().describe("When the lab received it (ISO 8601 UTC with microseconds and Z)."),
  payload_size: z.number().int().describe("Payload length in bytes."),
});

export const DeadLetterDetailOut = DeadLetterOut.extend({
  payload_text: z
    .string()
    .nullable()
    .describe("The payload as text when it is valid UTF-8; null when it is not."),
  payload_base64: z.string().describe("The payload bytes, base64 (always)."),
});

export const ReplayOut = z.object({
  replayed_id: z.number().int().describe("The dead letter replayed; it is gone now."),
  result: z
    .enum(REPLAY_RESULTS)
    .describe(
      "stored: the readings were stored; dead_letter: it failed again and is kept as `dead_letter` (good readings of it stored); already_ingested: its message id was ingested before, nothing stored; applied: a gateway status applied; ignored: a retained status cleared.",
    ),
  stored: z.number().int().describe("New measurement records."),
  duplicates: z.number().int().describe("Records already stored (re-sent readings)."),
  dead_letter: DeadLetterDetailOut.nullable().describe(
    "The new dead letter (new id, received now, the new reason) when it failed again.",
  ),
});

export const DEAD_LETTER_LISTS = listSchemas(toJsonSchema(DeadLetterOut));
export const DEAD_LETTER_DETAIL_JSON = toJsonSchema(DeadLetterDetailOut);
export const REPLAY_JSON = toJsonSchema(ReplayOut);

export const DeadLetterQuery = z.object({
  topic_prefix: queryParam(
    "Only topics starting with this text, exactly (case-sensitive), e.g. rpm/v1/cell/.",
  ),
  source: queryParam(
    "Only those of this gateway uuid or IMEI (its topics rpm/v1/gw/{source}/… and rpm/v1/cell/{source}/…; any case).",
  ),
  message_id: queryParam("Only those whose envelope names this message_id."),
  since: queryParam("Received at or after this ISO 8601 date-time (UTC without an offset).", {
    example: "2024-10-16T04:10:00Z",
  }),
  until: queryParam("Received before this ISO 8601 date-time; later than since.", {
    example: "2024-10-17T04:10:00Z",
  }),
  ...paginationQuery,
});

export const DeadLetterDeleteQuery = DeadLetterQuery.omit({ page: true, page_size: true }).extend({
  all: booleanField()
    .optional()
    .describe("true: delete every dead letter, when no filter narrows them (otherwise a 400)."),
});

export const DELETED_JSON = toJsonSchema(
  z.object({ deleted: z.number().int().describe("How many dead letters were deleted.") }),
);

export const DeadLetterParams = z.object({
  id: z.string().describe("The dead letter's id (an integer)."),
});
