import type { WebhookEvent } from "../store/types-ingest.ts";
import type { DeliveryState } from "../store/types-webhooks.ts";

/**
 * What a finished run measured, in the shape expectations are checked against. The runner
 * builds it from the readings ledger, the store and the API; evaluate.ts only reads it, so the
 * checks can be tested without running a lab.
 */

/** The readings ledger at the end of a run (one reading = one physical measurement). */
export interface ReadingCounts {
  readonly taken: number;
  readonly stored: number;
  readonly lost_by_design: number;
  /** Held by a replaced unit (spec 4.3) when it went back to the vendor: never sent. */
  readonly returned_with_unit: number;
  /** Still held by a device or an outbox when the run (and its drain) ended: not sent yet. */
  readonly held_at_end: number;
  /** Dropped, the oldest, by a full device store or outbox (as real ones do): never sent. */
  readonly dropped_full: number;
  readonly missing: number;
  readonly duplicates_stored: number;
  readonly duplicates_suppressed: number;
}

/** Deliveries of one event kind to one webhook of the scenario, in one state. */
export interface WebhookCount {
  /** The scenario's webhook id. */
  readonly webhook: string;
  readonly event: WebhookEvent;
  readonly state: DeliveryState;
  readonly count: number;
}

export interface Observed {
  readonly readings: ReadingCounts;
  readonly webhooks: readonly WebhookCount[];
  /** Shipments (orders and replacements) that reached each fulfilment status at some point. */
  readonly fulfilment: ReadonlyMap<string, number>;
  /**
   * An HWI GET as the scenario's account `account`, `path` as written in the expectation (e.g.
   * "/hwi/hwi-patients/?page=1"): the status, and the answer's item count as resultCount reads
   * it (undefined when the body holds no list).
   */
  readonly api: (
    account: string,
    path: string,
  ) => Promise<{ status: number; count: number | undefined }>;
}

/**
 * Items in an API answer, as an `api` expectation's `count` means them: the `count` of a
 * paginated envelope (spec 2.6: the total over every page, not the page's length), the length of
 * a flat array, or the length of `results` when an object carries results without a numeric
 * count. Anything else (an error body, a single record, text) has no count: undefined.
 */
export function resultCount(body: unknown): number | undefined {
  if (Array.isArray(body)) return body.length;
  if (typeof body !== "object" || body === null) return undefined;
  const { count, results } = body as { count?: unknown; results?: unknown };
  if (typeof count === "number" && Number.isInteger(count) && count >= 0) return count;
  if (Array.isArray(results)) return results.length;
  return undefined;
}
