import type { Rng } from "../core/rng.ts";
import { MS_PER_HOUR } from "../core/time.ts";

/**
 * When a failed measurement delivery is tried again (spec 6.1: "retried automatically with
 * exponential backoff"; the schedule is "not shown", so this is rpmlab's). The wait doubles from
 * 15 seconds up to an hour, then stays at an hour; each wait is drawn ±20 % around its value so
 * that deliveries that failed together do not come back together. Retries go on until 24 hours
 * after the delivery was created: a wait that would pass that mark ends at it (one last attempt,
 * so an endpoint back just before the mark still gets the delivery), and a delivery still failing
 * there gives up as `failed`. The README's table is generated from these values.
 */
export const FIRST_RETRY_MS = 15_000;
export const MAX_RETRY_MS = MS_PER_HOUR;
export const JITTER = 0.2;
export const GIVE_UP_AFTER_MS = 24 * MS_PER_HOUR;

/** The nominal wait after the `failed`-th failed attempt (1 for the first), before jitter. */
export function nominalDelay(failed: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failed - 1));
}

export interface RetryInput {
  /** When the delivery was created: the 24 hours count from there. */
  readonly created: number;
  readonly now: number;
  /** Attempts made, the failed one included. */
  readonly attempts: number;
  /** A Retry-After the endpoint sent (429, 503), in ms: waited for, up to MAX_RETRY_MS. */
  readonly retryAfterMs?: number | null;
  /** The delivery's own stream for this attempt (forked per delivery and attempt). */
  readonly rng: Rng;
}

/** When to try again, or null: give up. */
export function nextAttemptAt(input: RetryInput): number | null {
  const jittered = nominalDelay(input.attempts) * input.rng.uniform(1 - JITTER, 1 + JITTER);
  const wait = Math.max(jittered, Math.min(MAX_RETRY_MS, input.retryAfterMs ?? 0));
  const giveUpAt = input.created + GIVE_UP_AFTER_MS;
  return input.now >= giveUpAt ? null : Math.min(giveUpAt, input.now + Math.round(wait));
}

/** The schedule as the README shows it: attempt number, nominal wait before it, nominal time. */
export function scheduleTable(): { attempt: number; waitMs: number; sinceFirstMs: number }[] {
  const rows = [{ attempt: 1, waitMs: 0, sinceFirstMs: 0 }];
  for (let failed = 1, since = 0; ; failed++) {
    const wait = nominalDelay(failed);
    since += wait;
    rows.push({ attempt: failed + 1, waitMs: wait, sinceFirstMs: since });
    if (wait >= MAX_RETRY_MS) return rows;
  }
}

/** "15 s", "1 min 45 s", "2 h 4 min". */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const parts: string[] = [];
  if (s >= 3600) parts.push(`${Math.floor(s / 3600)} h`);
  if (s % 3600 >= 60) parts.push(`${Math.floor((s % 3600) / 60)} min`);
  if (s % 60 > 0 || s === 0) parts.push(`${s % 60} s`);
  return parts.join(" ");
}
