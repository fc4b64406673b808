import type { WebhookRow } from "../store/types-ingest.ts";
import {
  type AttemptOutcome,
  DELIVERY_STATES,
  type DeliveryRow,
  type DeliveryState,
} from "../store/types-webhooks.ts";
import type { ClaimedDelivery } from "./dispatch-store.ts";

/**
 * Attempt outcomes and claimed deliveries as they cross between the dispatcher and its worker
 * thread (dispatch-worker.ts): in columns, numbers in typed arrays and repeated strings once.
 * postMessage copies objects property by property (V8's ValueSerializer, then its deserializer
 * in the other thread): for the hundreds of each that every round carries, that was 4.1 µs a
 * claimed delivery and 2.3 µs an outcome, against 1.1 and 0.4 µs in columns (500 of each,
 * 2026-11-29) — in the two threads that also make the requests and keep the log.
 */

/** Outcomes in columns: per outcome, REFS string references and NUMBERS numbers. */
export interface PackedOutcomes {
  readonly strings: readonly string[];
  readonly deliveryIds: readonly string[];
  /** state (index in DELIVERY_STATES), endpoint, error, response snippet; -1 for null. */
  readonly refs: Int32Array;
  /** at, latencyMs, statusCode, nextAttemptAt; NaN for null. */
  readonly numbers: Float64Array;
  readonly manual: Uint8Array;
}

/** Claimed deliveries in columns, each with its webhook (by index in `webhooks`, -1: deleted). */
export interface PackedClaims {
  readonly strings: readonly string[];
  readonly webhooks: readonly WebhookRow[];
  readonly ids: readonly string[];
  readonly bodies: readonly string[];
  /** webhook, accountId, webhookId, event, state, hwiDeviceId, patientId; -1 for null. */
  readonly refs: Int32Array;
  /** attempts, manualAttempts, nextAttemptAt, created, modified; NaN for null. */
  readonly numbers: Float64Array;
  /** retry, test and inFlight as bits 0, 1 and 2. */
  readonly flags: Uint8Array;
  /** Per delivery, its count of measurement ids (-1: null), taken in turn from `measurementIds`. */
  readonly measurementCounts: Int32Array;
  readonly measurementIds: Float64Array;
}

const OUTCOME_REFS = 4;
const OUTCOME_NUMBERS = 4;
const CLAIM_REFS = 7;
const CLAIM_NUMBERS = 5;
const RETRY = 1;
const TEST = 2;
const IN_FLIGHT = 4;

export function packOutcomes(outcomes: readonly AttemptOutcome[]): PackedOutcomes {
  const n = outcomes.length;
  const strings = new Interned();
  const refs = new Int32Array(n * OUTCOME_REFS);
  const numbers = new Float64Array(n * OUTCOME_NUMBERS);
  const manual = new Uint8Array(n);
  const deliveryIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const { deliveryId, attempt, state, nextAttemptAt } = outcomes[i]!;
    deliveryIds.push(deliveryId);
    const r = i * OUTCOME_REFS;
    refs[r] = state === null ? -1 : DELIVERY_STATES.indexOf(state);
    refs[r + 1] = strings.ref(attempt.endpoint);
    refs[r + 2] = strings.ref(attempt.error);
    refs[r + 3] = strings.ref(attempt.responseSnippet);
    const m = i * OUTCOME_NUMBERS;
    numbers[m] = attempt.at;
    numbers[m + 1] = attempt.latencyMs;
    numbers[m + 2] = attempt.statusCode ?? Number.NaN;
    numbers[m + 3] = nextAttemptAt ?? Number.NaN;
    manual[i] = attempt.manual ? 1 : 0;
  }
  return { strings: strings.list, deliveryIds, refs, numbers, manual };
}

export function unpackOutcomes(packed: PackedOutcomes): AttemptOutcome[] {
  const { strings, deliveryIds, refs, numbers, manual } = packed;
  const text = (ref: number) => (ref < 0 ? null : strings[ref]!);
  return deliveryIds.map((deliveryId, i) => {
    const r = i * OUTCOME_REFS;
    const m = i * OUTCOME_NUMBERS;
    return {
      deliveryId,
      attempt: {
        at: numbers[m]!,
        endpoint: text(refs[r + 1]!),
        statusCode: orNull(numbers[m + 2]!),
        error: text(refs[r + 2]!),
        latencyMs: numbers[m + 1]!,
        responseSnippet: text(refs[r + 3]!),
        manual: manual[i] === 1,
      },
      state: refs[r]! < 0 ? null : (DELIVERY_STATES[refs[r]!] as DeliveryState),
      nextAttemptAt: orNull(numbers[m + 3]!),
    };
  });
}

export function packClaims(claimed: readonly ClaimedDelivery[]): PackedClaims {
  const n = claimed.length;
  const strings = new Interned();
  const webhooks: WebhookRow[] = [];
  const webhookIndex = new Map<WebhookRow, number>();
  const ids: string[] = [];
  const bodies: string[] = [];
  const refs = new Int32Array(n * CLAIM_REFS);
  const numbers = new Float64Array(n * CLAIM_NUMBERS);
  const flags = new Uint8Array(n);
  const measurementCounts = new Int32Array(n);
  const measurementIds: number[] = [];
  for (let i = 0; i < n; i++) {
    const { delivery: d, webhook } = claimed[i]!;
    let w = -1;
    if (webhook !== null) {
      w = webhookIndex.get(webhook) ?? webhooks.push(webhook) - 1;
      webhookIndex.set(webhook, w);
    }
    ids.push(d.id);
    bodies.push(d.body);
    const r = i * CLAIM_REFS;
    refs[r] = w;
    refs[r + 1] = strings.ref(d.accountId);
    refs[r + 2] = strings.ref(d.webhookId);
    refs[r + 3] = strings.ref(d.event);
    refs[r + 4] = strings.ref(d.state);
    refs[r + 5] = strings.ref(d.hwiDeviceId);
    refs[r + 6] = strings.ref(d.patientId);
    const m = i * CLAIM_NUMBERS;
    numbers[m] = d.attempts;
    numbers[m + 1] = d.manualAttempts;
    numbers[m + 2] = d.nextAttemptAt ?? Number.NaN;
    numbers[m + 3] = d.created;
    numbers[m + 4] = d.modified;
    flags[i] = (d.retry ? RETRY : 0) | (d.test ? TEST : 0) | (d.inFlight ? IN_FLIGHT : 0);
    measurementCounts[i] = d.measurementIds?.length ?? -1;
    if (d.measurementIds !== null) measurementIds.push(...d.measurementIds);
  }
  return {
    strings: strings.list,
    webhooks,
    ids,
    bodies,
    refs,
    numbers,
    flags,
    measurementCounts,
    measurementIds: Float64Array.from(measurementIds),
  };
}

export function unpackClaims(packed: PackedClaims): ClaimedDelivery[] {
  const { strings, webhooks, ids, bodies, refs, numbers, flags, measurementCounts } = packed;
  const text = (ref: number) => (ref < 0 ? null : strings[ref]!);
  let next = 0;
  return ids.map((id, i) => {
    const r = i * CLAIM_REFS;
    const m = i * CLAIM_NUMBERS;
    const count = measurementCounts[i]!;
    const measurementIds =
      count < 0 ? null : Array.from(packed.measurementIds.subarray(next, next + count));
    next += Math.max(0, count);
    const delivery: DeliveryRow = {
      id,
      accountId: strings[refs[r + 1]!]!,
      webhookId: strings[refs[r + 2]!]!,
      event: strings[refs[r + 3]!]! as DeliveryRow["event"],
      body: bodies[i]!,
      state: strings[refs[r + 4]!]! as DeliveryState,
      retry: (flags[i]! & RETRY) !== 0,
      test: (flags[i]! & TEST) !== 0,
      attempts: numbers[m]!,
      manualAttempts: numbers[m + 1]!,
      nextAttemptAt: orNull(numbers[m + 2]!),
      inFlight: (flags[i]! & IN_FLIGHT) !== 0,
      hwiDeviceId: text(refs[r + 5]!),
      patientId: text(refs[r + 6]!),
      measurementIds,
      created: numbers[m + 3]!,
      modified: numbers[m + 4]!,
    };
    return { delivery, webhook: refs[r]! < 0 ? null : webhooks[refs[r]!]! };
  });
}

/** Strings listed once each, referred to by their index. */
class Interned {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();

  ref(value: string | null): number {
    if (value === null) return -1;
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.list.push(value) - 1;
      this.index.set(value, i);
    }
    return i;
  }
}

function orNull(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}
