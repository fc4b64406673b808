import type { Insertable, Selectable } from "kysely";
import { type Ctx, keepableText } from "../context.ts";
import { readBool, readNum, readNumOrNull, writeJson } from "../dialect.ts";
import type { WebhookAttemptsTable, WebhookDeliveriesTable } from "../schema-webhooks.ts";
import type { WebhookEvent } from "../types-ingest.ts";
import type {
  AttemptRow,
  DeliveryRow,
  DeliveryState,
  NewAttempt,
  NewDelivery,
} from "../types-webhooks.ts";

export function toDeliveryRow(ctx: Ctx, r: Selectable<WebhookDeliveriesTable>): DeliveryRow {
  const ids = ctx.d.readJson(r.measurement_ids) as number[] | null;
  return {
    id: r.id,
    accountId: r.account_id,
    webhookId: r.webhook_id,
    event: r.event as WebhookEvent,
    body: r.body,
    state: r.state as DeliveryState,
    retry: readBool(r.retry),
    test: readBool(r.test),
    attempts: readNum(r.attempts),
    manualAttempts: readNum(r.manual_attempts),
    nextAttemptAt: readNumOrNull(r.next_attempt_at),
    // Not compared with a clock: `rpmlab webhooks` reads the wall clock, a lab may run on a
    // virtual one. A stopping dispatcher gives its claims back (release); a killed one's stay
    // until another dispatcher takes them again, in flight once more.
    inFlight: r.state === "pending" && readBool(r.claimed),
    hwiDeviceId: r.hwi_device_id,
    patientId: r.patient_id,
    measurementIds: ids,
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}

export function toAttemptRow(r: Selectable<WebhookAttemptsTable>): AttemptRow {
  return {
    id: readNum(r.id),
    deliveryId: r.delivery_id,
    number: readNum(r.number),
    at: readNum(r.at),
    endpoint: r.endpoint,
    statusCode: readNumOrNull(r.status_code),
    error: r.error,
    latencyMs: readNum(r.latency_ms),
    responseSnippet: r.response_snippet,
    manual: readBool(r.manual),
  };
}

export function deliveryInsertable(
  ctx: Ctx,
  input: NewDelivery,
  now: number,
  seq: number,
): Insertable<WebhookDeliveriesTable> {
  return {
    // Time-ordered: deliveries are written thousands a second, at the end of the key's index.
    id: ctx.ids.deliveryId(now),
    account_id: input.accountId,
    webhook_id: input.webhookId,
    event: input.event,
    body: input.body,
    state: input.callerOnly === true ? "not_retried" : "pending",
    retry: ctx.d.toBool(input.retry),
    test: ctx.d.toBool(input.test ?? false),
    attempts: 0,
    manual_attempts: 0,
    seq,
    next_attempt_at: input.callerOnly === true ? null : (input.nextAttemptAt ?? now),
    claimed: ctx.d.toBool(isClaimedAtCreation(input, now)),
    hwi_device_id: input.hwiDeviceId ?? null,
    patient_id: input.patientId ?? null,
    measurement_ids: writeJson(input.measurementIds ?? null),
    created: now,
    modified: now,
  };
}

export function attemptInsertable(
  ctx: Ctx,
  deliveryId: string,
  number: number,
  a: NewAttempt,
): Insertable<WebhookAttemptsTable> {
  return {
    delivery_id: deliveryId,
    number,
    at: a.at,
    endpoint: a.endpoint,
    status_code: a.statusCode,
    // A client's endpoint may answer anything, U+0000 included (keepableText).
    error: a.error === null ? null : keepableText(a.error),
    latency_ms: a.latencyMs,
    response_snippet: a.responseSnippet === null ? null : keepableText(a.responseSnippet),
    manual: ctx.d.toBool(a.manual),
  };
}

/** A first attempt due later than its creation is a claim (NewDelivery.nextAttemptAt). */
export function isClaimedAtCreation(input: NewDelivery, now: number): boolean {
  return (
    input.callerOnly !== true && input.nextAttemptAt !== undefined && input.nextAttemptAt > now
  );
}
