import type { Clock } from "../core/clock.ts";
import { ClockSweep } from "../core/clock-sweep.ts";
import type { Logger } from "../core/logger.ts";
import { MS_PER_DAY, MS_PER_HOUR } from "../core/time.ts";
import type { Store } from "../store/store.ts";

/**
 * How long an uplink's message-id claim is kept (README "Ingestion"). A claim turns a QoS 1
 * redelivery into "stored nothing twice"; one forgotten earlier would have been a table that
 * grew by a row per uplink for as long as the lab ran. A gateway re-sending after a longer
 * absence still stores nothing twice: its readings are then duplicates of stored ones
 * (measurements are unique per device, metric and device time) and are counted as such.
 */
export const CLAIM_RETENTION_MS = 30 * MS_PER_DAY;

/** Forgets, hourly on the lab's clock, the claims older than CLAIM_RETENTION_MS. */
export function claimRetention(store: Store, clock: Clock, logger?: Logger): ClockSweep {
  return new ClockSweep(clock, MS_PER_HOUR, async () => {
    try {
      const removed = await store.ingestedMessages.prune(clock.now() - CLAIM_RETENTION_MS);
      if (removed > 0) logger?.debug({ removed }, "message-id claims past retention forgotten");
    } catch (error) {
      logger?.warn({ err: error }, "message-id claims not pruned; the next hour tries again");
    }
  });
}
