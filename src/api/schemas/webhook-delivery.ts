import { z } from "zod";
import { WEBHOOK_EVENTS } from "../../store/types-ingest.ts";
import { DELIVERY_STATES } from "../../store/types-webhooks.ts";
import { iso, toJsonSchema } from "../json-schema.ts";
import { listSchemas, paginationQuery, queryParam } from "../pagination.ts";

/** Wire schemas of the webhook delivery log (lab admin API; src/app/webhook-log.ts renders). */

export const AttemptOut = z.object({
  number: z.number().int().describe("1 for the first attempt."),
  at: iso(),
  endpoint: z
    .string()
    .nullable()
    .describe(
      "The URL posted to, its secrets as ***: the password of `user:password@` (a user name alone, a token, too) and the value of each query parameter whose name is, or has as a word (split at `_`, `-`, `.` and lower-to-upper changes, any case), token, key, apikey, secret, signature, sig, password, pass, auth or code (`?access_token=***&id=7`). Null when no request was made.",
    ),
  status_code: z.number().int().nullable().describe("The answer's status; null without one."),
  error: z
    .string()
    .nullable()
    .describe("Why no answer came (timeout, connection refused…), or why nothing was sent."),
  latency_ms: z.number().describe("Request sent to answer read, real milliseconds."),
  response_snippet: z
    .string()
    .nullable()
    .describe(
      "The start of the answer's body, at most 512 characters (… when cut); a U+0000 in it is the six characters \\u0000.",
    ),
  manual: z.boolean().describe("A resend asked for by a user."),
});

export const DeliveryOut = z.object({
  id: z.string().describe("The delivery id: X-Rpmlab-Delivery on every attempt."),
  webhook_id: z.string(),
  event: z.enum(WEBHOOK_EVENTS),
  state: z
    .enum(DELIVERY_STATES)
    .describe(
      "pending (waiting for an attempt, or being attempted: in_flight), delivered (a 2xx), failed (a measurement delivery that gave up after 24 hours, or whose webhook was deleted before its attempt), not_retried (a fulfilment, special-order, patient or test delivery whose one attempt failed, spec 6.1; a test delivery is not_retried from the start, its one attempt the sending process's alone).",
    ),
  test: z.boolean().describe("A test send."),
  attempts: z.number().int(),
  next_attempt_at: iso()
    .nullable()
    .describe("Pending and not in flight: when the next attempt is due (past: due now)."),
  in_flight: z
    .boolean()
    .describe(
      "Pending and being attempted now: a dispatcher has it; next_attempt_at is null until the attempt's outcome is recorded.",
    ),
  hwi_device_id: z.string().nullable(),
  patient_id: z.string().nullable(),
  measurement_ids: z
    .array(z.number().int())
    .nullable()
    .describe("Ids of the measurements in the body (MEASUREMENT)."),
  created: iso(),
  modified: iso(),
  last_attempt: AttemptOut.nullable(),
});

export const DeliveryDetailOut = DeliveryOut.extend({
  body: z.unknown().describe("The JSON posted, the same on every attempt."),
  attempt_log: z.array(AttemptOut).describe("Every attempt, oldest first."),
});

export const DELIVERY_LISTS = listSchemas(toJsonSchema(DeliveryOut));
export const DELIVERY_DETAIL_JSON = toJsonSchema(DeliveryDetailOut);

export const DeliveryQuery = z.object({
  webhook_id: queryParam("Only this webhook's deliveries."),
  state: queryParam(`Only deliveries in this state: ${DELIVERY_STATES.join(", ")} (any case).`, {
    example: "delivered",
  }),
  event: queryParam(`Only this kind: ${WEBHOOK_EVENTS.join(", ")} (any case).`, {
    example: "MEASUREMENT",
  }),
  hwi_device_id: queryParam("Only deliveries about this device."),
  patient_id: queryParam("Only deliveries about this patient (external_id, exact)."),
  ...paginationQuery,
});

export const DeliveryParams = z.object({
  clientDomain: z.string(),
  id: z.string().describe("The delivery id (UUID)."),
});

export const WebhookParams = z.object({
  clientDomain: z.string(),
  id: z.string().describe("The webhook id (UUID)."),
});
