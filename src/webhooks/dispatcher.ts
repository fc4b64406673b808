import type { Catalogue } from "../catalogue/catalogue.ts";
import type { WebhookDeliveryConfig } from "../config/webhook-config.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { Rng } from "../core/rng.ts";
import { MS_PER_DAY, MS_PER_HOUR } from "../core/time.ts";
import type { Store } from "../store/store.ts";
import type { WebhookRow } from "../store/types-ingest.ts";
import { type AttemptDeps, attemptDelivery } from "./attempt.ts";
import { EXPAND_BATCH, expandOutbox } from "./expand.ts";
import { type Job, Lane, laneKey } from "./lanes.ts";
import { ResultWriter } from "./result-writer.ts";
import type { WebhookSender } from "./sender.ts";
import { StatusMetrics } from "./status-metrics.ts";
import { Tracker } from "./tracker.ts";

export interface DispatcherOptions {
  readonly store: Store;
  /** Due times, claims and retry waits: virtual in scenarios, system in serve. */
  readonly clock: Clock;
  /** Retry jitter, forked per delivery and attempt. */
  readonly rng: Rng;
  readonly catalogue: Catalogue;
  readonly sender: WebhookSender;
  readonly config: WebhookDeliveryConfig;
  readonly logger?: Logger;
  /**
   * How often to look for work without being nudged (another process's outbox entries or lapsed
   * claims), clock ms. Default 1000.
   */
  readonly pollMs?: number;
  /** How long finished deliveries stay in the log, clock ms. Default 7 days. */
  readonly retentionMs?: number;
}

export const DEFAULT_POLL_MS = 1000;
export const DEFAULT_RETENTION_MS = 7 * MS_PER_DAY;
/** With work due that no lane can take, look again this much later (clock ms). */
const RESCAN_MS = 1000;
/** On stop, how long attempts under way may finish before they are cut off (clock ms). */
const STOP_GRACE_MS = 2000;

/**
 * The webhook dispatcher (issue 4 §1), in the main thread of `serve`. Work arrives in the store's
 * outbox, written in the transactions of the changes themselves (a stored ingestion batch, a
 * fulfilment status, a patient write); the dispatcher learns of it by a nudge (the ingestor's
 * `batch` event, the device services' events, the patient routes) and, as a fallback, by polling
 * on the clock. Each round it:
 * 1. expands outbox entries into deliveries (expand.ts), one transaction per hundred entries;
 * 2. claims due deliveries per webhook, as many as the webhook's endpoint lane can take — a
 *    claim is the delivery's due time moved to when the claim lapses (2 × timeout + 1 s), so a
 *    process that dies while sending gives its deliveries back by itself;
 * 3. arms a clock timer for the next due time (a retry's wait, a lapsing claim).
 * Lanes (lanes.ts) send each endpoint's deliveries with its own concurrency; outcomes are
 * recorded in batches (result-writer.ts), which nudges the next round.
 */
export class WebhookDispatcher {
  private readonly statusMetrics: StatusMetrics;
  private readonly tracker = new Tracker();
  private readonly writer: ResultWriter;
  private readonly attemptDeps: AttemptDeps;
  private readonly lanes = new Map<string, Lane>();
  /** Deliveries claimed by this dispatcher and not yet recorded. */
  private readonly held = new Set<string>();
  /** Webhooks that may have due deliveries. */
  private readonly hot = new Set<string>();
  private readonly attempts = new Set<AbortController>();
  private readonly leaseMs: number;
  private scan = true;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private pollTimer: TimerHandle | undefined;
  private dueTimer: { readonly handle: TimerHandle; readonly at: number } | undefined;
  private lastPrune = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: DispatcherOptions) {
    this.statusMetrics = new StatusMetrics(options.catalogue);
    this.writer = new ResultWriter(options.store, this.tracker, () => this.nudge(), options.logger);
    this.attemptDeps = { sender: options.sender, clock: options.clock, rng: options.rng };
    this.leaseMs = 2 * options.config.timeoutMs + 1000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.scan = true;
    this.poll();
  }

  /** There may be new work (outbox entries, freed lanes): a round runs soon. */
  nudge(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.tracker.track(this.rounds());
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
    const { clock, store } = this.options;
    if (this.pollTimer !== undefined) clock.clearTimeout(this.pollTimer);
    if (this.dueTimer !== undefined) clock.clearTimeout(this.dueTimer.handle);
    this.pollTimer = undefined;
    this.dueTimer = undefined;
    await this.running?.catch(() => undefined);
    const unstarted = [...this.lanes.values()].flatMap((lane) => lane.drop());
    for (const job of unstarted) this.held.delete(job.delivery.id);
    let grace: TimerHandle | undefined;
    const cut = new Promise<void>((resolve) => {
      grace = clock.setTimeout(resolve, STOP_GRACE_MS);
    });
    await Promise.race([this.tracker.idle(), cut]);
    clock.clearTimeout(grace!);
    for (const controller of this.attempts) controller.abort();
    await this.tracker.idle();
    await this.writer.flush();
    const back = [...unstarted.map((job) => job.delivery.id), ...this.held];
    this.held.clear();
    if (back.length > 0) {
      await store.webhookDeliveries
        .release(back, clock.now())
        .catch((error: unknown) => this.options.logger?.warn({ err: error }, "release failed"));
    }
  }

  private poll(): void {
    this.scan = true;
    this.nudge();
    this.pollTimer = this.options.clock.setTimeout(
      () => this.poll(),
      this.options.pollMs ?? DEFAULT_POLL_MS,
    );
  }

  private async rounds(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.round();
      } while (this.again && !this.stopped);
    } catch (error) {
      // The store failed (unreachable, busy): the poll comes back to it.
      this.options.logger?.error({ err: error }, "webhook dispatch round failed");
    } finally {
      this.running = undefined;
    }
  }

  private async round(): Promise<void> {
    const { store, clock } = this.options;
    for (;;) {
      const { taken, created } = await expandOutbox(store, this.statusMetrics);
      for (const delivery of created) this.hot.add(delivery.webhookId);
      if (taken < EXPAND_BATCH || this.stopped) break;
    }
    if (this.scan) {
      this.scan = false;
      for (const id of await store.webhookDeliveries.dueWebhooks(clock.now())) this.hot.add(id);
      await this.prune();
    }
    if (this.hot.size > 0 && !this.stopped) await this.claim();
    if (!this.stopped) this.armDue(await store.webhookDeliveries.nextDue());
  }

  /** Claims, for each webhook with due work, what its lane can take; hands it to the lane. */
  private async claim(): Promise<void> {
    const { store, clock } = this.options;
    const webhooks = new Map((await store.webhooks.getMany([...this.hot])).map((w) => [w.id, w]));
    for (const id of [...this.hot]) {
      const webhook = webhooks.get(id) ?? null;
      const lane = this.lane(webhook);
      const free = lane.free;
      if (free <= 0) continue;
      const now = clock.now();
      const claimed = await store.webhookDeliveries.claim(id, {
        now,
        until: now + this.leaseMs,
        limit: free,
      });
      if (claimed.length < free) this.hot.delete(id);
      for (const delivery of claimed) {
        // Our own claim lapsed while it waited, and was taken again: it is in a lane already.
        if (this.held.has(delivery.id)) continue;
        this.held.add(delivery.id);
        lane.push({ delivery, webhook });
      }
    }
  }

  private lane(webhook: WebhookRow | null): Lane {
    const key = laneKey(webhook);
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      lane = new Lane(this.options.config.concurrency, (job) => this.tracker.track(this.send(job)));
      this.lanes.set(key, lane);
    }
    return lane;
  }

  private async send(job: Job): Promise<void> {
    const controller = new AbortController();
    this.attempts.add(controller);
    try {
      const outcome = await attemptDelivery(this.attemptDeps, job.delivery, job.webhook, {
        manual: false,
        signal: controller.signal,
      });
      // Aborted by stop(): released there, with the deliveries still held.
      if (outcome === null) return;
      this.held.delete(job.delivery.id);
      this.writer.add(outcome);
    } catch (error) {
      // Not expected (a sender never throws): the claim lapses and it is attempted again.
      this.held.delete(job.delivery.id);
      this.options.logger?.error(
        { err: error, delivery: job.delivery.id },
        "webhook attempt failed",
      );
    } finally {
      this.attempts.delete(controller);
    }
  }

  /** A clock timer for the next due delivery (a retry, a lapsing claim), unless one is sooner. */
  private armDue(next: number | null): void {
    const { clock } = this.options;
    if (next === null) return;
    const now = clock.now();
    // Due already but not claimed: every lane that could take it is full; they nudge as they
    // free up, and this looks again in a while in case the work is another process's.
    const at = next <= now ? now + RESCAN_MS : next;
    if (this.dueTimer !== undefined) {
      if (this.dueTimer.at <= at) return;
      clock.clearTimeout(this.dueTimer.handle);
    }
    const handle = clock.setTimeout(() => {
      this.dueTimer = undefined;
      this.scan = true;
      this.nudge();
    }, at - now);
    this.dueTimer = { handle, at };
  }

  /** At most hourly: finished deliveries older than the retention leave the log. */
  private async prune(): Promise<void> {
    const now = this.options.clock.now();
    if (now - this.lastPrune < MS_PER_HOUR) return;
    this.lastPrune = now;
    const removed = await this.options.store.webhookDeliveries.prune(
      now - (this.options.retentionMs ?? DEFAULT_RETENTION_MS),
    );
    if (removed > 0) this.options.logger?.info({ removed }, "webhook deliveries pruned");
  }
}
