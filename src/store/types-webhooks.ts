import type { Ms } from "./types.ts";
import type { WebhookEvent } from "./types-ingest.ts";

/**
 * Webhook delivery (issue 4 §1): the outbox written in the transaction of each change, the
 * deliveries the dispatcher expands it into, and each delivery's attempts.
 */

/** A run of consecutive measurement ids, [first, last], both inclusive. */
export type IdRange = readonly [first: number, last: number];

/** One event waiting in the outbox, written in the same transaction as its change. */
export interface NewOutboxEntry {
  readonly accountId: string;
  readonly event: WebhookEvent;
  /** MEASUREMENT: the measurements a transaction stored for the account, as runs of ids. */
  readonly ranges?: readonly IdRange[];
  /** FULFILLMENT, SPECIAL_ORDER, PATIENT: the body to post, rendered when the change happened. */
  readonly body?: unknown;
  /** Kept on the deliveries, to find them in the log. */
  readonly hwiDeviceId?: string | null;
  readonly patientId?: string | null;
}

export interface OutboxEntry {
  readonly id: number;
  readonly accountId: string;
  readonly event: WebhookEvent;
  readonly ranges: readonly IdRange[] | null;
  readonly body: unknown;
  readonly hwiDeviceId: string | null;
  readonly patientId: string | null;
  readonly created: Ms;
}

/**
 * pending: waiting for its first or next attempt; delivered: a 2xx answer; failed: a measurement
 * delivery that gave up after its retries (or whose webhook was deleted); not_retried: a
 * fulfilment, special-order, patient or test delivery whose one attempt failed (spec 6.1).
 */
export const DELIVERY_STATES = ["pending", "delivered", "failed", "not_retried"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface NewDelivery {
  readonly accountId: string;
  readonly webhookId: string;
  readonly event: WebhookEvent;
  /** The JSON text posted on every attempt. */
  readonly body: string;
  /** Automatic retries (measurement deliveries, spec 6.1). */
  readonly retry: boolean;
  /** A test send (rpmlab's stand-in for the dashboard's test button). */
  readonly test?: boolean;
  readonly hwiDeviceId?: string | null;
  readonly patientId?: string | null;
  /** The measurements in the body. */
  readonly measurementIds?: readonly number[] | null;
  /** When the first attempt is due; default now. A later time holds it as claimed until then. */
  readonly nextAttemptAt?: Ms;
  /**
   * Never attempted by a dispatcher: written not_retried with no attempt due, for the caller to
   * make its one attempt and record it (a test send). No hold of the clock's time could outlast
   * every attempt: a webhook timeout runs up to 600 s of wall time, and a demo's clock runs faster.
   */
  readonly callerOnly?: boolean;
}

export interface DeliveryRow {
  /** UUID, sent as X-Rpmlab-Delivery on every attempt. */
  readonly id: string;
  readonly accountId: string;
  readonly webhookId: string;
  readonly event: WebhookEvent;
  readonly body: string;
  readonly state: DeliveryState;
  readonly retry: boolean;
  readonly test: boolean;
  /** Attempts made so far. */
  readonly attempts: number;
  /** Of those, the resends a user asked for: the automatic backoff does not count them. */
  readonly manualAttempts: number;
  /**
   * Pending: when the next attempt is due, or, while a dispatcher sends it, when its claim
   * lapses. Null once delivered, failed or not retried.
   */
  readonly nextAttemptAt: Ms | null;
  /**
   * Pending and claimed by a dispatcher: being attempted now, and nextAttemptAt is when the
   * claim lapses, not a due time.
   */
  readonly inFlight: boolean;
  readonly hwiDeviceId: string | null;
  readonly patientId: string | null;
  readonly measurementIds: readonly number[] | null;
  readonly created: Ms;
  readonly modified: Ms;
}

export interface NewAttempt {
  readonly at: Ms;
  /** The URL posted to; null when no request was made (the webhook was deleted). */
  readonly endpoint: string | null;
  readonly statusCode: number | null;
  /** Transport failure (timeout, refused, reset…) or why no request was made. */
  readonly error: string | null;
  /** Request sent to response read, real milliseconds. */
  readonly latencyMs: number;
  /** The start of the response body, truncated. */
  readonly responseSnippet: string | null;
  /** A resend asked for by a user, not an automatic attempt. */
  readonly manual: boolean;
}

export interface AttemptRow extends NewAttempt {
  readonly id: number;
  readonly deliveryId: string;
  /** 1 for the first attempt. */
  readonly number: number;
}

/** What one attempt changes on its delivery. */
export interface AttemptOutcome {
  readonly deliveryId: string;
  readonly attempt: NewAttempt;
  /**
   * The delivery's state after the attempt, with `nextAttemptAt`; null leaves both as they are in
   * the store when the attempt is recorded (a resend that failed: the delivery keeps whatever
   * schedule the dispatcher gave it meanwhile).
   */
  readonly state: DeliveryState | null;
  readonly nextAttemptAt: Ms | null;
}

export interface DeliveryFilter {
  readonly webhookId?: string;
  readonly state?: DeliveryState;
  readonly event?: WebhookEvent;
  readonly hwiDeviceId?: string;
  readonly patientId?: string;
}

/** A delivery as the log lists it: with its latest attempt. */
export interface DeliverySummary extends DeliveryRow {
  readonly lastAttempt: AttemptRow | null;
}
