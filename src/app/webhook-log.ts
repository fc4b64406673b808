import type { RpmlabError } from "../core/errors.ts";
import { fieldError } from "../core/field-errors.ts";
import { toIsoMicros } from "../core/time.ts";
import { uuidFilter } from "../fulfilment/identifiers.ts";
import type { Store } from "../store/store.ts";
import type { ListOptions, ListResult } from "../store/types.ts";
import { WEBHOOK_EVENTS, type WebhookEvent } from "../store/types-ingest.ts";
import {
  type AttemptRow,
  DELIVERY_STATES,
  type DeliveryFilter,
  type DeliveryRow,
  type DeliveryState,
  type DeliverySummary,
} from "../store/types-webhooks.ts";
import { type DeliveryDetail, type ManualSends, noDelivery } from "../webhooks/manual.ts";
import { findAccount } from "./accounts.ts";

/**
 * The webhook delivery log, resends and test sends (issue 4 §1 "Inspection"), shared by the lab
 * admin API (/lab/v1/accounts/{client_domain}/webhook-deliveries/) and `rpmlab webhooks`.
 */

/** Filters as the API's query and the CLI's flags name them; unknown values are refused. */
export interface DeliveryQuery {
  readonly webhook_id?: string | undefined;
  readonly state?: string | undefined;
  readonly event?: string | undefined;
  readonly hwi_device_id?: string | undefined;
  readonly patient_id?: string | undefined;
}

export function deliveryFilter(q: DeliveryQuery): DeliveryFilter {
  const filter: { -readonly [K in keyof DeliveryFilter]: DeliveryFilter[K] } = {};
  const given = (v: string | undefined) =>
    v === undefined || v.trim() === "" ? undefined : v.trim();
  const stateGiven = given(q.state);
  if (stateGiven !== undefined) {
    // Matched in any case, as event is; refused as given.
    const state = stateGiven.toLowerCase();
    if (!(DELIVERY_STATES as readonly string[]).includes(state)) {
      throw invalidChoice("state", stateGiven, DELIVERY_STATES);
    }
    filter.state = state as DeliveryState;
  }
  const eventGiven = given(q.event);
  if (eventGiven !== undefined) {
    // Matched in any case; refused as given, not as uppercased here.
    const event = eventGiven.toUpperCase();
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(event)) {
      throw invalidChoice("event", eventGiven, WEBHOOK_EVENTS);
    }
    filter.event = event as WebhookEvent;
  }
  const webhook = uuidFilter("webhook_id", q.webhook_id);
  if (webhook !== undefined) filter.webhookId = webhook;
  const device = uuidFilter("hwi_device_id", q.hwi_device_id);
  if (device !== undefined) filter.hwiDeviceId = device;
  const patient = given(q.patient_id);
  if (patient !== undefined) filter.patientId = patient;
  return filter;
}

function invalidChoice(field: string, value: string, choices: readonly string[]): RpmlabError {
  return fieldError(field, `"${value}" is not a valid choice (${choices.join(", ")}).`);
}

export async function listDeliveries(
  store: Store,
  clientDomain: string,
  filter: DeliveryFilter,
  page?: ListOptions,
): Promise<ListResult<DeliverySummary>> {
  const account = await findAccount(store, clientDomain);
  return store.webhookDeliveries.list(account.id, filter, page);
}

export async function deliveryDetail(
  store: Store,
  clientDomain: string,
  id: string,
): Promise<DeliveryDetail> {
  const account = await findAccount(store, clientDomain);
  const delivery = await store.webhookDeliveries.get(account.id, id.trim().toLowerCase());
  if (delivery === null) throw noDelivery(id);
  return { delivery, attempts: await store.webhookDeliveries.attempts(delivery.id) };
}

export async function resendDelivery(
  store: Store,
  manual: ManualSends,
  clientDomain: string,
  id: string,
): Promise<DeliveryDetail> {
  const account = await findAccount(store, clientDomain);
  return manual.resend(account.id, id.trim().toLowerCase());
}

export async function testWebhook(
  store: Store,
  manual: ManualSends,
  clientDomain: string,
  webhookId: string,
): Promise<DeliveryDetail> {
  const account = await findAccount(store, clientDomain);
  return manual.test(account.id, webhookId.trim().toLowerCase());
}

/** The wire form of an attempt (admin API, `--json`). */
export function attemptJson(a: AttemptRow) {
  return {
    number: a.number,
    at: toIsoMicros(a.at),
    endpoint: a.endpoint,
    status_code: a.statusCode,
    error: a.error,
    latency_ms: Math.round(a.latencyMs * 100) / 100,
    response_snippet: a.responseSnippet,
    manual: a.manual,
  };
}

/** The wire form of a delivery as the log lists it. */
export function deliveryJson(d: DeliveryRow & { lastAttempt?: AttemptRow | null }) {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event: d.event,
    state: d.state,
    test: d.test,
    attempts: d.attempts,
    // In flight, nextAttemptAt is when the dispatcher's claim lapses: no attempt is due then.
    next_attempt_at: d.nextAttemptAt === null || d.inFlight ? null : toIsoMicros(d.nextAttemptAt),
    in_flight: d.inFlight,
    hwi_device_id: d.hwiDeviceId,
    patient_id: d.patientId,
    measurement_ids: d.measurementIds === null ? null : [...d.measurementIds],
    created: toIsoMicros(d.created),
    modified: toIsoMicros(d.modified),
    last_attempt:
      d.lastAttempt === undefined || d.lastAttempt === null ? null : attemptJson(d.lastAttempt),
  };
}

/** One delivery in full: what was posted and every attempt. */
export function deliveryDetailJson(detail: DeliveryDetail) {
  return {
    ...deliveryJson({ ...detail.delivery, lastAttempt: detail.attempts.at(-1) ?? null }),
    body: JSON.parse(detail.delivery.body) as unknown,
    attempt_log: detail.attempts.map(attemptJson),
  };
}

export type DeliveryJson = ReturnType<typeof deliveryJson>;
export type DeliveryDetailJson = ReturnType<typeof deliveryDetailJson>;
