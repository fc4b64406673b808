import type { WebhookDeliveryConfig } from "../config/webhook-config.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import { TypedEvents } from "../core/events.ts";
import type { Logger } from "../core/logger.ts";
import type { Rng } from "../core/rng.ts";
import { MS_PER_DAY, MS_PER_HOUR } from "../core/time.ts";
import type { WebhookRow } from "../store/types-ingest.ts";
import type { AttemptOutcome, DeliveryRow } from "../store/types-webhooks.ts";
import { type AttemptDeps, attemptDelivery } from "./attempt.ts";
import type { DispatchStore, ExchangeResult, LaneRoom } from "./dispatch-store.ts";
import { type Job, Lane, laneKey } from "./lanes.ts";
import type { WebhookSender } from "./sender.ts";
import { Tracker } from "./tracker.ts";

export interface DispatcherOptions {
  /** The store's side of dispatching, in this thread or a worker's (dispatch-stores.ts). */
  readonly store: DispatchStore;
  /** Due times, claims and retry waits: virtual in scenarios, system in serve. */
  readonly clock: Clock;
  /** Retry jitter, forked per delivery and attempt. */
  readonly rng: Rng;
  readonly sender: WebhookSender;
  readonly config: WebhookDeliveryConfig;
  readonly logger?: Logger;
  /**
   * How often to look for work without being nudged (another process's outbox entries or lapsed
   * claims), clock ms. Default 1000.
   */
  readonly pollMs?: number;
  /** How long finished deliveries stay in the log, from their creation, clock ms. Default 7 days. */
  readonly retentionMs?: number;
}

/** What the dispatcher announces (the dashboard's live feed listens). */
export type DispatcherEvents = {
  /** An automatic attempt ended; its outcome is recorded in the round after. */
  attempt: { readonly delivery: DeliveryRow; readonly outcome: AttemptOutcome };
};

export const DEFAULT_POLL_MS = 1000;
export const DEFAULT_RETENTION_MS = 7 * MS_PER_DAY;
/** With work due that no lane can take, look again this much later (clock ms). */
const RESCAN_MS = 1000;
/** Finished attempts that make a round on their own. */
const RECORD_BATCH = 512;
/** On stop, how long attempts under way may finish before they are cut off (clock ms). */
const STOP_GRACE_MS = 2000;

/**
 * The webhook dispatcher (issue 4 §1), in the main thread of `serve`. Work arrives in the store's
 * outbox, written in the transactions of the changes themselves (a stored ingestion batch, a
 * fulfilment status, a patient write); the dispatcher learns of it by a nudge (the ingestor's
 * `batch` event, the device services' events, the patient routes) and, as a fallback, by polling
 * on the clock. A round:
 * 1. expands outbox entries into deliveries (expand.ts), one transaction per hundred entries;
 *    those an endpoint lane has room for are created claimed and start at once;
 * 2. in one transaction, records the attempts finished since the last round and claims due
 *    deliveries for the lanes with room — a claim moves a delivery's due time to when the claim
 *    lapses (2 × timeout + 1 s), so a process that dies while sending gives it back by itself;
 * 3. arms a clock timer for the next due time (a retry's wait, a lapsing claim).
 * Lanes (lanes.ts) send each endpoint's deliveries with its own concurrency; each attempt that
 * finishes asks for the next round.
 */
export class WebhookDispatcher {
  readonly events = new TypedEvents<DispatcherEvents>();
  private readonly store: DispatchStore;
  private readonly tracker = new Tracker();
  private readonly attemptDeps: AttemptDeps;
  private readonly lanes = new Map<string, Lane>();
  /** Deliveries claimed by this dispatcher and not yet recorded. */
  private readonly held = new Set<string>();
  /** Webhooks that may have due deliveries. */
  private readonly hot = new Set<string>();
  /** Attempts finished and not yet recorded. */
  private outcomes: AttemptOutcome[] = [];
  /** Set when stop() cut attempts off: their outcomes are not kept. */
  private cutOff = false;
  private readonly leaseMs: number;
  private scan = true;
  /** The outbox may hold entries (a nudge, the poll). */
  private outbox = true;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private pollTimer: TimerHandle | undefined;
  private dueTimer: { readonly handle: TimerHandle; readonly at: number } | undefined;
  private lastPrune = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: DispatcherOptions) {
    this.store = options.store;
    this.attemptDeps = { sender: options.sender, clock: options.clock, rng: options.rng };
    this.leaseMs = 2 * options.config.timeoutMs + 1000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.cutOff = false;
    this.scan = true;
    this.poll();
  }

  /** A write committed outbox entries: a round runs at once. */
  nudge(): void {
    this.round(true);
  }

  /** Resolves once nothing is under way: no round, attempt or write (tests wait on it). */
  idle(): Promise<void> {
    return this.tracker.idle();
  }

  /**
   * Stops taking work; attempts under way get a short grace, then are cut off and their
   * deliveries, like those claimed and not started, are given back, due now, for the next start.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const { clock } = this.options;
    if (this.pollTimer !== undefined) clock.clearTimeout(this.pollTimer);
    if (this.dueTimer !== undefined) clock.clearTimeout(this.dueTimer.handle);
    this.pollTimer = undefined;
    this.dueTimer = undefined;
    await this.running?.catch(() => undefined);
    const unstarted = [...this.lanes.values()].flatMap((lane) => lane.drop());
    let grace: TimerHandle | undefined;
    const cut = new Promise<void>((resolve) => {
      grace = clock.setTimeout(resolve, STOP_GRACE_MS);
    });
    await Promise.race([this.tracker.idle(), cut]);
    clock.clearTimeout(grace!);
    this.cutOff = true;
    await this.options.sender.abort();
    await this.tracker.idle();
    await this.exchange().catch(() => undefined);
    // Claimed and never attempted (or cut off): due now, for whoever starts next.
    const back = [...new Set([...unstarted.map((job) => job.delivery.id), ...this.held])];
    this.held.clear();
    if (back.length > 0) {
      await this.store
        .release(back, clock.now())
        .catch((error: unknown) => this.options.logger?.warn({ err: error }, "release failed"));
    }
  }

  private poll(): void {
    this.scan = true;
    this.round(true);
    this.pollTimer = this.options.clock.setTimeout(
      () => this.poll(),
      this.options.pollMs ?? DEFAULT_POLL_MS,
    );
  }

  /**
   * Asks for a round: after this turn of the event loop, so that attempts finishing together are
   * recorded together; while one runs, another follows it.
   */
  private round(outbox: boolean): void {
    if (this.stopped) return;
    if (outbox) this.outbox = true;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.tracker.track(nextTurn().then(() => this.rounds()));
  }

  private async rounds(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.work();
      } while (this.again && !this.stopped);
    } catch (error) {
      // The store failed (unreachable, busy): the outbox may still hold entries; the poll comes
      // back to it.
      this.outbox = true;
      this.options.logger?.error({ err: error }, "webhook dispatch round failed");
    } finally {
      this.running = undefined;
    }
  }

  private async work(): Promise<void> {
    const { clock } = this.options;
    const store = this.store;
    while (this.outbox && !this.stopped) {
      // Cleared before the read, not after: a nudge that comes while it runs (a batch committed
      // after the read) sets it again, and this loop takes that entry too.
      this.outbox = false;
      const now = clock.now();
      const { more, unclaimed, claimed } = await store.expand(
        this.room((lane) => lane.free),
        now,
        now + this.leaseMs,
      );
      if (more) this.outbox = true;
      for (const webhookId of unclaimed) this.hot.add(webhookId);
      for (const { delivery, webhook } of claimed) this.begin(delivery, webhook);
      // A lane is full: the rest of the outbox waits for the round it asks for as it frees up.
      if (unclaimed.length > 0) break;
    }
    if (this.scan && !this.stopped) {
      this.scan = false;
      for (const id of await store.dueWebhooks(clock.now())) this.hot.add(id);
      await this.prune();
    }
    await this.exchange();
    // With nothing due left to claim, the next due time (a retry, a lapsing claim) gets a timer.
    // While lanes are full they come back here as they free up.
    if (this.hot.size === 0 && !this.stopped) this.armDue(await store.nextDue());
  }

  /** The lanes' room as `measure` counts it, for the store side to take from. */
  private room(measure: (lane: Lane) => number): LaneRoom {
    const lanes: Record<string, number> = {};
    for (const [key, lane] of this.lanes) lanes[key] = measure(lane);
    const { concurrency, timeoutMs } = this.options.config;
    return { lanes, fresh: Lane.freshRoom(concurrency, timeoutMs) };
  }

  /**
   * One transaction: the attempts finished since the last one are recorded, and due deliveries
   * are claimed for the webhooks whose lanes have room (half their room or more, so that claims
   * come in batches). A transaction the store refuses loses its outcomes after logging: their
   * deliveries keep their claims, which lapse, and they are attempted again — never lost.
   */
  private async exchange(): Promise<void> {
    const { clock } = this.options;
    const outcomes = this.outcomes.splice(0);
    const hot = this.stopped ? [] : [...this.hot];
    if (outcomes.length === 0 && hot.length === 0) return;
    const now = clock.now();
    let claims: ExchangeResult["claims"];
    try {
      ({ claims } = await this.store.exchange(
        outcomes,
        hot,
        this.room((lane) => lane.claimable),
        now,
        now + this.leaseMs,
      ));
    } catch (error) {
      this.options.logger?.error(
        { err: error, outcomes: outcomes.length },
        "webhook attempts not recorded",
      );
      return;
    }
    const retries = outcomes.flatMap((o) =>
      o.state === "pending" && o.nextAttemptAt !== null ? [o.nextAttemptAt] : [],
    );
    if (retries.length > 0 && !this.stopped) this.armDue(Math.min(...retries));
    for (const { webhookId, rows, exhausted } of claims) {
      if (exhausted) this.hot.delete(webhookId);
      for (const { delivery, webhook } of rows) this.begin(delivery, webhook);
    }
  }

  /** Hands a claimed delivery to its lane. */
  private begin(delivery: DeliveryRow, webhook: WebhookRow | null): void {
    // Our own claim lapsed while it waited, and was taken again: it is in a lane already.
    if (this.held.has(delivery.id)) return;
    this.held.add(delivery.id);
    this.lane(webhook).push({ delivery, webhook });
  }

  private lane(webhook: WebhookRow | null): Lane {
    const key = laneKey(webhook);
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      const { concurrency, timeoutMs } = this.options.config;
      lane = new Lane(
        concurrency,
        timeoutMs,
        (job) => this.tracker.track(this.send(job)),
        (done) => this.settled(done),
      );
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /**
   * After an attempt: a round (and its transaction) for a batch of outcomes, not for each — when
   * the lane wants more work, has none left, or enough outcomes wait.
   */
  private settled(lane: Lane): void {
    if (
      this.outcomes.length >= RECORD_BATCH ||
      lane.idle ||
      (lane.claimable > 0 && (this.hot.size > 0 || this.outbox))
    ) {
      this.round(false);
    }
  }

  private async send(job: Job): Promise<void> {
    try {
      const outcome = await attemptDelivery(this.attemptDeps, job.delivery, job.webhook, {
        manual: false,
      });
      // Cut off by stop(): given back there, as it is still held.
      if (this.cutOff) return;
      this.held.delete(job.delivery.id);
      this.outcomes.push(outcome);
      this.events.emit("attempt", { delivery: job.delivery, outcome });
    } catch (error) {
      // Not expected (a sender never throws): the claim lapses and it is attempted again.
      this.held.delete(job.delivery.id);
      this.options.logger?.error(
        { err: error, delivery: job.delivery.id },
        "webhook attempt failed",
      );
    }
  }

  /** A clock timer for the next due delivery (a retry, a lapsing claim), unless one is sooner. */
  private armDue(next: number | null): void {
    const { clock } = this.options;
    if (next === null) return;
    const now = clock.now();
    // Due already but not claimed: every lane that could take it is full; they ask for rounds
    // as they free up, and this looks again in a while in case the work is another process's.
    const at = next <= now ? now + RESCAN_MS : next;
    if (this.dueTimer !== undefined) {
      if (this.dueTimer.at <= at) return;
      clock.clearTimeout(this.dueTimer.handle);
    }
    const handle = clock.setTimeout(() => {
      this.dueTimer = undefined;
      this.scan = true;
      this.round(false);
    }, at - now);
    this.dueTimer = { handle, at };
  }

  /**
   * At most hourly: finished deliveries older than the retention leave the log, and lanes given
   * no job since the last sweep leave the dispatcher. A lane is kept per endpoint origin, and
   * every round hands the room of each to the store side (to the dispatch worker, on a SQLite
   * file): a long `serve` whose users register receivers on fresh ports and delete them again
   * kept one for every origin it ever posted to. A busy endpoint keeps its lane and its pace;
   * one that comes back after an hour or more gets a fresh lane (counted as slow at first).
   */
  private async prune(): Promise<void> {
    const now = this.options.clock.now();
    if (now - this.lastPrune < MS_PER_HOUR) return;
    this.lastPrune = now;
    for (const [key, lane] of this.lanes) {
      if (lane.idle && !lane.used) this.lanes.delete(key);
      else lane.used = false;
    }
    const removed = await this.store.prune(
      now - (this.options.retentionMs ?? DEFAULT_RETENTION_MS),
    );
    if (removed > 0) this.options.logger?.info({ removed }, "webhook deliveries pruned");
  }
}

/** After the event loop's next round of I/O. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
