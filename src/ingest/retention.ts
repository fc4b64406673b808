import type { Clock } from "../core/clock.ts";
import { ClockSweep } from "../core/clock-sweep.ts";
import type { Logger } from "../core/logger.ts";
import { MS_PER_DAY, MS_PER_HOUR } from "../core/time.ts";
import type { Store } from "../store/store.ts";

/**
 * How long ingestion keeps what it remembers of each message (README "Ingestion", "Dead
 * letters"), by the lab's clock:
 * - an uplink's message-id claim, which turns a QoS 1 redelivery into "stored nothing twice";
 *   kept forever it was a table that grew by a row per uplink for as long as the lab ran. A
 *   gateway re-sending after a longer absence still stores nothing twice: its readings are then
 *   duplicates of stored ones (measurements are unique per device, metric and device time) and
 *   are counted as such;
 * - a dead letter: a device sending garbage once a second adds 2.6 million of them a month.
 *   Kept as long as the claims, so a dead letter that holds its message's claim never outlives
 *   it.
 */
export const INGEST_RETENTION_MS = 30 * MS_PER_DAY;

/** Forgets, hourly on the lab's clock, the claims and dead letters older than the retention. */
export function ingestRetention(store: Store, clock: Clock, logger?: Logger): ClockSweep {
  return new ClockSweep(clock, MS_PER_HOUR, async () => {
    const before = clock.now() - INGEST_RETENTION_MS;
    try {
      const claims = await store.ingestedMessages.prune(before);
      const deadLetters = await store.deadLetters.deleteMany({ until: before });
      if (claims + deadLetters > 0) {
        logger?.debug(
          { claims, deadLetters },
          "message-id claims and dead letters past retention forgotten",
        );
      }
    } catch (error) {
      logger?.warn({ err: error }, "ingestion's retention not applied; the next hour tries again");
    }
  });
}
