import type { Logger } from "../core/logger.ts";
import type { Store } from "../store/store.ts";
import type { AttemptOutcome } from "../store/types-webhooks.ts";
import type { Tracker } from "./tracker.ts";

/** Outcomes per transaction. */
const FLUSH_BATCH = 500;

/**
 * Records attempt outcomes in batches: all that finished during one turn of the event loop go in
 * one transaction (one commit for hundreds of deliveries, not one each). A batch the store
 * refuses is dropped after logging: its deliveries keep their claims, which lapse, and they are
 * attempted again — at least once, never lost.
 */
export class ResultWriter {
  private queue: AttemptOutcome[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly tracker: Tracker,
    private readonly onFlushed: () => void,
    private readonly logger?: Logger,
  ) {}

  add(outcome: AttemptOutcome): void {
    this.queue.push(outcome);
    this.schedule();
  }

  private schedule(): void {
    this.flushing ??= this.tracker.track(
      nextTurn()
        .then(() => this.flush())
        .finally(() => {
          this.flushing = undefined;
          // Added between the last batch and now: another round.
          if (this.queue.length > 0) this.schedule();
        }),
    );
  }

  /** Writes everything added so far. */
  async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, FLUSH_BATCH);
      try {
        await this.store.transaction((tx) => tx.webhookDeliveries.record(batch));
      } catch (error) {
        this.logger?.error({ err: error, outcomes: batch.length }, "webhook attempts not recorded");
      }
    }
    this.onFlushed();
  }
}

/** After the event loop's next round of I/O: the attempts finishing meanwhile join the batch. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
