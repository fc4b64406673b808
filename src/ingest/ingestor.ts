import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Clock } from "../core/clock.ts";
import { isRpmlabError, RpmlabError } from "../core/errors.ts";
import { TypedEvents } from "../core/events.ts";
import type { Logger } from "../core/logger.ts";
import type { Store } from "../store/store.ts";
import type { BatchResult, IngestEvents, MessageOutcome } from "./events.ts";
import {
  deadLetterOf,
  type Inbound,
  type ReplayOf,
  reasonOf,
  salvageMessageId,
} from "./prepare.ts";
import { type BatchProcessor, MessageProcessor } from "./processor.ts";
import type { IngestSink, IngestSource, Received, Settle } from "./source.ts";
import { WorkerProcessor } from "./worker-processor.ts";

export interface IngestorOptions {
  /** Where messages come from (src/ingest/sources). */
  readonly source: IngestSource;
  readonly store: Store;
  readonly catalogue: Catalogue;
  /** Receipt times (`created`) and store retry waits. */
  readonly clock: Clock;
  readonly logger?: Logger;
  /** Messages per transaction at most. Default MAX_BATCH. */
  readonly maxBatch?: number;
  /** Messages waiting for the next batch before reading from the broker pauses. Default HIGH_WATER. */
  readonly highWater?: number;
  /** Wait before retrying a batch the store failed (clock ms). Default 1000. */
  readonly retryMs?: number;
  /**
   * The spec of `store` (a SQLite file, workerStoreOf): batches then commit in a worker thread
   * with its own connection to it, so the broker and the MQTT client keep this thread.
   */
  readonly workerStore?: string;
}

/**
 * Under load a batch takes whatever arrived while the previous one committed, up to MAX_BATCH.
 * Bigger batches cost less per message: a commit writes every index page its rows touched, and
 * the same pages take a few hundred rows or a few thousand (test/bench/ingest.ts measured the
 * CPU per message of 1,000-message batches at 1.3 times that of 4,000-message ones). PUBACKs
 * wait for the commit, so a batch is also how long a publisher may wait: a few hundred ms.
 */
const MAX_BATCH = 4000;
/** Twice a batch: the next one fills while one commits, and memory stays bounded (~1 KiB each). */
const HIGH_WATER = 2 * MAX_BATCH;

/** Event-loop turns without a new message after which a batch is committed. */
const IDLE_TURNS = 4;

interface Queued {
  readonly inbound: Inbound;
  readonly settle: Settle;
  /** What became of it, once committed (replays wait for it). */
  readonly outcome?: (outcome: MessageOutcome) => void;
  /** A replay the store refused, and its dead letter too: nothing of it was committed. */
  readonly refused?: (error: unknown) => void;
}

/**
 * The ingestion core's pace: messages from a source (an MQTT subscription, or the embedded
 * broker's tap) queue up; those arriving while a batch commits form the next batch, so batches
 * grow with load; each commits in one transaction (MessageProcessor), and only then are its
 * messages settled with their senders, in arrival order.
 */
export class Ingestor implements IngestSink {
  readonly events = new TypedEvents<IngestEvents>();
  private readonly processor: BatchProcessor;
  private started = false;
  private queue: Queued[] = [];
  private paused: (() => void)[] = [];
  private scheduled = false;
  private draining: Promise<void> | undefined;
  private stopping = false;
  /** Ends the wait before a store retry (stop() calls it). */
  private wakeRetry: (() => void) | undefined;

  constructor(private readonly options: IngestorOptions) {
    this.processor =
      options.workerStore === undefined
        ? new MessageProcessor(options)
        : new WorkerProcessor({ ...options, storeSpec: options.workerStore });
    this.events.onError((error) => options.logger?.error({ err: error }, "ingest listener failed"));
  }

  /** Messages received and not yet committed. */
  get pending(): number {
    return this.queue.length;
  }

  async start(): Promise<void> {
    const o = this.options;
    this.stopping = false;
    await this.processor.start();
    try {
      await o.source.start(this);
    } catch (error) {
      await this.processor.stop();
      throw error;
    }
    this.started = true;
    o.logger?.info({ source: o.source.describe }, "ingest started");
  }

  /**
   * Commits what was received, then stops the source. Messages still queued behind the store
   * are settled not committed: their senders keep them and send them again.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeRetry?.();
    // Let a batch that is scheduled or under way finish; nothing new is scheduled now.
    while (this.scheduled || this.draining !== undefined) await (this.draining ?? nextTurn());
    if (this.queue.length > 0) await this.drain();
    for (const message of this.queue.splice(0)) message.settle(false);
    this.paused = [];
    if (this.started) await this.options.source.stop();
    this.started = false;
    await this.processor.stop();
  }

  deliver(message: Received, settle: Settle, proceed: () => void): void {
    // While stopping: not committed, and the source is not asked for more.
    if (this.stopping) {
      settle(false);
      return;
    }
    this.enqueue(message, settle);
    // Backpressure: past the high-water mark the source waits until a batch is taken.
    if (this.queue.length >= (this.options.highWater ?? HIGH_WATER)) this.paused.push(proceed);
    else proceed();
  }

  /**
   * Runs a dead letter through ingestion again (README "Dead letters"), in the batches of
   * everything else, so its events (stored readings' webhooks, a gateway's status) follow as
   * for any message. Resolves once committed; E_STORE_UNAVAILABLE when ingestion is not running
   * or stops first (nothing of it was committed, the dead letter is kept).
   */
  replay(message: Received, replays: ReplayOf): Promise<MessageOutcome> {
    return new Promise((resolve, reject) => {
      const notRunning = () =>
        reject(
          new RpmlabError("E_STORE_UNAVAILABLE", "ingestion is not running: nothing replayed", {
            deadLetter: replays.deadLetterId,
          }),
        );
      if (this.stopping || !this.started) {
        notRunning();
        return;
      }
      const settle: Settle = (committed) => {
        if (!committed) notRunning();
      };
      this.enqueue(message, settle, { replays, outcome: resolve, refused: reject });
    });
  }

  /** Queued for the next batch, received now (the lab's clock stamps every arrival). */
  private enqueue(
    message: Received,
    settle: Settle,
    replay?: {
      replays: ReplayOf;
      outcome: (outcome: MessageOutcome) => void;
      refused: (error: unknown) => void;
    },
  ): void {
    const receivedAt = this.options.clock.now();
    const { topic, payload } = message;
    this.queue.push(
      replay === undefined
        ? { inbound: { topic, payload, receivedAt }, settle }
        : {
            inbound: { topic, payload, receivedAt, replays: replay.replays },
            settle,
            outcome: replay.outcome,
            refused: replay.refused,
          },
    );
    this.schedule();
  }

  /** A batch starts once the event loop has taken in what arrived with the first message. */
  private schedule(): void {
    if (this.scheduled || this.draining !== undefined) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.draining = this.drain()
        .catch((error: unknown) => this.options.logger?.error({ err: error }, "ingest failed"))
        .finally(() => {
          this.draining = undefined;
          if (this.queue.length > 0 && !this.stopping) this.schedule();
        });
    });
  }

  private async drain(): Promise<void> {
    const max = this.options.maxBatch ?? MAX_BATCH;
    while (this.queue.length > 0) {
      // While messages keep coming, let the next event-loop turns bring more: a commit costs
      // about the same for one message as for hundreds (the pages it writes are shared). A
      // broker in this process needs a few turns per round of deliveries (aedes: setImmediate,
      // then its persistence, then the socket), so the batch closes after IDLE_TURNS quiet ones.
      for (let quiet = 0; quiet < IDLE_TURNS && this.queue.length < max; ) {
        const seen = this.queue.length;
        await nextTurn();
        quiet = this.queue.length > seen ? 0 : quiet + 1;
      }
      const batch = this.queue.splice(0, max);
      for (const resume of this.paused.splice(0)) resume();
      await this.commit(batch);
    }
  }

  /** Commits a batch, retrying while the store is unavailable; a poison message is isolated. */
  private async commit(batch: readonly Queued[]): Promise<void> {
    for (;;) {
      try {
        this.acknowledge(batch, await this.processor.process(batch.map((m) => m.inbound)));
        return;
      } catch (error) {
        if (!isRpmlabError(error, "E_STORE_UNAVAILABLE")) {
          if (batch.length > 1) {
            for (const message of batch) await this.commit([message]);
            return;
          }
          if (await this.deadLetterAlone(batch[0]!, error)) return;
        }
        const retryInMs = this.options.retryMs ?? 1000;
        this.events.emit("store_error", { error, retryInMs });
        if (this.stopping || !(await this.wait(retryInMs))) {
          // Stopped while the store was down: the senders keep these and send them again.
          for (const message of batch) message.settle(false);
          return;
        }
      }
    }
  }

  /**
   * A message the store refuses even alone: kept as a dead letter. False if the store is down
   * (the caller retries). A dead letter the store refuses too (not an outage: those are retried)
   * would be refused again on every redelivery and hold back everything behind it in the
   * session, so the message is acknowledged and left whole in the log at error level instead.
   */
  private async deadLetterAlone(message: Queued, error: unknown): Promise<boolean> {
    const { inbound } = message;
    try {
      const row = await this.options.store.transaction(async (tx) => {
        // A replay the store refuses replaces its old dead letter all the same, and keeps the
        // claim that one held (its batch, which would have claimed anew, was rolled back).
        const { replays } = inbound;
        if (replays !== undefined) await tx.deadLetters.delete(replays.deadLetterId);
        return tx.deadLetters.add({
          topic: inbound.topic,
          ...deadLetterOf(inbound, reasonOf(error)),
          received: inbound.receivedAt,
          // Its envelope parsed: the dead letter names its message id, as every other does
          // (found by ?message_id=, shown in lists).
          messageId: salvageMessageId(inbound.payload),
          holdsClaim: replays?.holdsClaim ?? false,
        });
      });
      this.acknowledge([message], {
        outcomes: [{ kind: "dead_letter", deadLetter: row }],
        stored: [],
        deadLetters: [row],
        gateways: [],
      });
      return true;
    } catch (refused) {
      if (isRpmlabError(refused, "E_STORE_UNAVAILABLE")) return false;
      if (message.refused !== undefined) {
        // A replay: its transaction rolled back, so its dead letter is kept as it was; the
        // replay answers with the store's error (it waited for an outcome that never came).
        message.settle(true);
        message.refused(refused);
        return true;
      }
      this.options.logger?.error(
        {
          err: refused,
          topic: inbound.topic,
          reason: reasonOf(error),
          payloadBase64: Buffer.from(inbound.payload).toString("base64"),
        },
        "message and its dead letter refused by the store: acknowledged, kept only in this log",
      );
      message.settle(true);
      this.events.emit("message_refused", { topic: inbound.topic, error: refused });
      return true;
    }
  }

  /** [MQTT-4.6.0-2] PUBACKs in arrival order, after the commit; then the events. */
  private acknowledge(batch: readonly Queued[], result: BatchResult): void {
    for (const [i, message] of batch.entries()) {
      message.settle(true);
      message.outcome?.(result.outcomes[i]!);
    }
    if (result.stored.length > 0) this.events.emit("measurement.stored", { rows: result.stored });
    for (const row of result.deadLetters) this.events.emit("dead_letter", { row });
    for (const outcome of result.outcomes) {
      if (outcome.kind === "status") {
        const { gateway, online, whitelistHeld, receivedAt, checkinAt } = outcome;
        this.events.emit("gateway.status", {
          gateway,
          online,
          whitelistHeld,
          receivedAt,
          checkinAt,
        });
      }
    }
    this.events.emit("batch", result);
  }

  /** Waits `ms` of clock time; false when stop() cut it short. */
  private wait(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const finish = (completed: boolean) => {
        this.wakeRetry = undefined;
        resolve(completed);
      };
      const handle = this.options.clock.setTimeout(() => finish(true), ms);
      this.wakeRetry = () => {
        this.options.clock.clearTimeout(handle);
        finish(false);
      };
    });
  }
}

/** Resolves after the event loop's next round of I/O callbacks. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
