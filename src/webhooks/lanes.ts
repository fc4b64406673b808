import { startStopwatch } from "../core/stopwatch.ts";
import type { WebhookRow } from "../store/types-ingest.ts";
import type { DeliveryRow } from "../store/types-webhooks.ts";
import { endpointOf } from "./endpoint.ts";

export interface Job {
  readonly delivery: DeliveryRow;
  /** Null when the webhook was deleted: the job fails the delivery without a request. */
  readonly webhook: WebhookRow | null;
}

/**
 * Rounds of `concurrency` attempts a fast endpoint may have waiting: 2,056 deliveries at the
 * default concurrency, a few megabytes of bodies. An outbox entry (one ingested batch, often
 * hundreds of records) then mostly fits, so its deliveries are created claimed rather than
 * pending and claimed one round later: 8 % more webhooks a second than with 64 rounds
 * (test/bench/webhooks.ts, 2026-11-27).
 */
const MAX_ROUNDS = 256;

/**
 * One endpoint's queue (issue 4 §1: "a slow or dead endpoint never delays the others"): at most
 * `concurrency` attempts in flight, and claimed ones waiting their turn — as many as the
 * endpoint gets through within one timeout at its recent pace (up to 256 rounds of its
 * concurrency; one round while it is slow, dead or new). A claim lapses after two timeouts, so
 * a delivery never waits here until another dispatcher may take it.
 */
export class Lane {
  private inFlight = 0;
  private readonly waiting: Job[] = [];
  /** Recent attempt duration, real ms (moving average); a new endpoint counts as slow. */
  private pace: number;
  /** Given a job since the dispatcher's last sweep (it forgets lanes unused between two). */
  used = true;

  constructor(
    private readonly concurrency: number,
    private readonly timeoutMs: number,
    private readonly run: (job: Job) => Promise<void>,
    /** After each job, once the next ones started. */
    private readonly settled: (lane: Lane) => void,
  ) {
    this.pace = timeoutMs;
  }

  /** Jobs it can take now. */
  get free(): number {
    return this.capacity - this.inFlight - this.waiting.length;
  }

  /**
   * What to claim for it now: its room, once half of it is free (claims come in batches) or
   * once fewer than a round wait (it must not run dry while work is due).
   */
  get claimable(): number {
    const free = this.free;
    return free >= Math.ceil(this.capacity / 2) || this.waiting.length < this.concurrency
      ? free
      : 0;
  }

  private get capacity(): number {
    return capacityOf(this.concurrency, this.timeoutMs, this.pace);
  }

  /** The room of a lane not opened yet (a new endpoint counts as slow). */
  static freshRoom(concurrency: number, timeoutMs: number): number {
    return capacityOf(concurrency, timeoutMs, timeoutMs);
  }

  get idle(): boolean {
    return this.inFlight === 0 && this.waiting.length === 0;
  }

  push(job: Job): void {
    this.used = true;
    this.waiting.push(job);
    this.next();
  }

  /** Takes back the jobs not started (the dispatcher is stopping). */
  drop(): Job[] {
    return this.waiting.splice(0);
  }

  private next(): void {
    while (this.inFlight < this.concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      this.inFlight++;
      const elapsed = startStopwatch();
      void this.run(job).finally(() => {
        this.pace = 0.8 * this.pace + 0.2 * Math.max(1, elapsed());
        this.inFlight--;
        this.next();
        this.settled(this);
      });
    }
  }
}

function capacityOf(concurrency: number, timeoutMs: number, pace: number): number {
  const rounds = Math.min(MAX_ROUNDS, Math.max(1, Math.floor(timeoutMs / pace)));
  return concurrency * (1 + rounds);
}

/** The lane key of a webhook: its endpoint's origin (deleted webhooks share one lane). */
export function laneKey(webhook: WebhookRow | null): string {
  if (webhook === null) return "deleted:";
  return endpointOf(webhook.endpoint)?.origin ?? webhook.endpoint;
}
