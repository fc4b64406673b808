import { type Clock, SystemClock } from "../../core/clock.ts";
import { RpmlabError } from "../../core/errors.ts";
import type { TypedEvents } from "../../core/events.ts";
import type { VirtualClock } from "../../core/virtual-clock.ts";
import type { IngestEvents } from "../../ingest/events.ts";
import { reasonOf } from "../../ingest/prepare.ts";

/**
 * How long (wall time) the store may fail every commit of ingestion before a run gives up: a
 * PostgreSQL restart or a busy SQLite file is over in seconds, a store that refuses every write
 * never is, and a CI pipeline must not wait for it.
 */
export const STORE_FAILURE_LIMIT_MS = 30_000;
/** And at least this many failed attempts: one slow failure (a connect timeout) is not enough. */
const MIN_ATTEMPTS = 3;
/**
 * Wall time between ingestion's attempts while the store fails: a real server gets time to come
 * back, and is not hammered meanwhile.
 */
const PAUSE_MS = 200;

/** The store failing ingestion's commits since `since` (wall ms), with no commit in between. */
export interface StoreFailure {
  readonly since: number;
  readonly attempts: number;
  readonly error: unknown;
  /** Clock ms ingestion waits before it tries the batch again (Ingestor retryMs). */
  readonly retryInMs: number;
}

export interface StoreWatchOptions {
  /** The lab's ingestion events: `store_error` for each failed commit, `batch` for each commit. */
  readonly events: TypedEvents<IngestEvents>;
  /** The store's spec as a user may see it (redactStoreSpec): the error names it. */
  readonly store: string;
  /**
   * Real time, not the run's virtual clock: the limit is about how long CI waits. Default: a
   * SystemClock of the watch's own, disposed at close.
   */
  readonly wall?: Clock;
  /** The run's clock, which ingestion's retry waits are on. */
  readonly clock: VirtualClock;
  /** Default STORE_FAILURE_LIMIT_MS. */
  readonly limitMs?: number | undefined;
  /** The run's stop (Ctrl-C in `rpmlab demo`): no more waiting for the store then. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Follows whether ingestion can commit what the fleet sends. Ingestion is at-least-once: a
 * batch the store failed is kept, unacknowledged, and retried after `retryInMs` of the run's
 * clock (src/ingest/ingestor.ts), so a failure that passes loses nothing. A persistent one is
 * the store failing every attempt, with no batch committed in between, for `limitMs` of wall
 * time and at least MIN_ATTEMPTS attempts: `check()` then throws the run's error, naming the
 * store and its last error.
 */
export class StoreWatch {
  private current: StoreFailure | undefined;
  private waiting: (() => void)[] = [];
  /** settle()'s wait for the store's next failure. */
  private readonly failures = new Set<() => void>();
  private closed = false;
  private readonly ownWall: SystemClock | undefined;
  private readonly wall: Clock;
  private readonly unlisten: (() => void)[];

  constructor(private readonly options: StoreWatchOptions) {
    if (options.wall === undefined) {
      this.ownWall = new SystemClock();
      this.wall = this.ownWall;
    } else {
      this.wall = options.wall;
    }
    this.unlisten = [
      options.events.on("store_error", ({ error, retryInMs }) => {
        const since = this.current?.since ?? this.wall.now();
        const attempts = (this.current?.attempts ?? 0) + 1;
        this.current = { since, attempts, error, retryInMs };
        for (const wake of this.failures) wake();
        this.wake();
      }),
      options.events.on("batch", () => {
        this.current = undefined;
        this.wake();
      }),
    ];
  }

  /** The store failing now: ingestion waits on the clock to retry; undefined when it is not. */
  get failing(): StoreFailure | undefined {
    return this.current;
  }

  private get stopped(): boolean {
    return this.options.signal?.aborted === true;
  }

  /** Resolves at ingestion's next outcome: a batch committed, or one the store failed. */
  private next(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * Waits for `settled` (a clock step's publications acknowledged: Fleet.settle). A gateway's
   * PUBACK means stored (BrokerTap), so while the store fails it waits for ingestion's retry,
   * which waits on the run's clock: the clock then moves by that retry wait only, one attempt
   * per PAUSE_MS of wall time (the scenario's world stands nearly still through a short
   * outage), until a commit succeeds or `check()` gives up.
   */
  async settle(settled: Promise<void>): Promise<void> {
    const done = settled.then(() => true);
    // Rejections reach the caller through the race below; none is left unhandled.
    done.catch(() => undefined);
    for (;;) {
      if (this.current === undefined && !this.closed) {
        // One waiter per wait, removed after it: a run waits at every step.
        let wake: () => void = () => undefined;
        const failed = new Promise<boolean>((resolve) => {
          wake = () => resolve(false);
          this.failures.add(wake);
        });
        try {
          if (await Promise.race([done, failed])) return;
        } finally {
          this.failures.delete(wake);
        }
      }
      if (this.closed) return await settled;
      if (this.stopped) return;
      await this.recovered();
    }
  }

  /**
   * Resolves once the store is not failing (at once when it is not) or the run is stopped:
   * meanwhile lets ingestion retry, PAUSE_MS apart, until it commits, or check() throws.
   */
  async recovered(): Promise<void> {
    const { clock } = this.options;
    const { wall } = this;
    while (this.current !== undefined && !this.stopped) {
      this.check();
      await wall.sleep(PAUSE_MS);
      const failure = this.current;
      if (failure === undefined) return;
      await clock.run({ until: clock.now() + failure.retryInMs });
      // The retry is under way (its commit is I/O): its outcome, or the next pause.
      await Promise.race([this.next(), wall.sleep(PAUSE_MS)]);
    }
  }

  /** Throws E_SCENARIO_FAILED once the store has failed for the limit (class comment). */
  check(): void {
    const failure = this.current;
    if (failure === undefined) return;
    const limitMs = this.options.limitMs ?? STORE_FAILURE_LIMIT_MS;
    const forMs = this.wall.now() - failure.since;
    if (forMs < limitMs || failure.attempts < MIN_ATTEMPTS) return;
    throw new RpmlabError(
      "E_SCENARIO_FAILED",
      `ingestion cannot store what the fleet sends: the store (${this.options.store}) failed ` +
        `every attempt for ${(forMs / 1000).toFixed(1)} s of wall time (${failure.attempts} ` +
        `attempts, none committed); last error: ${reasonOf(failure.error)}`,
      { store: this.options.store, attempts: failure.attempts },
      failure.error,
    );
  }

  close(): void {
    this.closed = true;
    for (const off of this.unlisten.splice(0)) off();
    for (const wake of this.failures) wake();
    this.wake();
    this.ownWall?.dispose();
  }

  private wake(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}
