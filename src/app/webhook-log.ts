import { FieldErrorCollector } from "../core/field-errors.ts";
import { toIsoMicros } from "../core/time.ts";
import { isUuid } from "../fulfilment/identifiers.ts";
import type { Store } from "../store/store.ts";
import type { ListOptions, ListResult } from "../store/types.ts";
import { WEBHOOK_EVENTS } from "../store/types-ingest.ts";
import {
  type AttemptRow,
  DELIVERY_STATES,
  type DeliveryFilter,
  type DeliveryRow,
  type DeliverySummary,
} from "../store/types-webhooks.ts";
import { loggedEndpoint } from "../webhooks/endpoint.ts";
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

/** Every field that is wrong is named at once, as the dead letters' filters are. */
export function deliveryFilter(q: DeliveryQuery): DeliveryFilter {
  const filter: { -readonly [K in keyof DeliveryFilter]: DeliveryFilter[K] } = {};
  const errors = new FieldErrorCollector();
  const given = (v: string | undefined) =>
    v === undefined || v.trim() === "" ? undefined : v.trim();
  /** One of `choices` in any case (as `normal` spells them), or an error naming it as given. */
  const choice = <T extends string>(
    field: string,
    choices: readonly T[],
    normal: (v: string) => string,
  ): T | undefined => {
    const value = given(q[field as keyof DeliveryQuery]);
    if (value === undefined) return undefined;
    if ((choices as readonly string[]).includes(normal(value))) return normal(value) as T;
    errors.add(field, `"${value}" is not a valid choice (${choices.join(", ")}).`);
    return undefined;
  };
  const uuid = (field: "webhook_id" | "hwi_device_id"): string | undefined => {
    const value = given(q[field]);
    if (value === undefined || isUuid(value)) return value?.toLowerCase();
    errors.add(field, "Enter a valid UUID.");
    return undefined;
  };
  const state = choice("state", DELIVERY_STATES, (v) => v.toLowerCase());
  if (state !== undefined) filter.state = state;
  const event = choice("event", WEBHOOK_EVENTS, (v) => v.toUpperCase());
  if (event !== undefined) filter.event = event;
  const webhook = uuid("webhook_id");
  if (webhook !== undefined) filter.webhookId = webhook;
  const device = uuid("hwi_device_id");
  if (device !== undefined) filter.hwiDeviceId = device;
  const patient = given(q.patient_id);
  if (patient !== undefined) filter.patientId = patient;
  errors.throwIfAny();
  return filter;
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
    // Masked again as it is read: attempts logged before a rule of loggedEndpoint was added
    // (secret query values) are shown by today's rules.
    endpoint: a.endpoint === null ? null : loggedEndpoint(a.endpoint),
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
