import type { WebhookRow } from "../store/types-ingest.ts";
import type { DeliveryRow } from "../store/types-webhooks.ts";

export interface Job {
  readonly delivery: DeliveryRow;
  /** Null when the webhook was deleted: the job fails the delivery without a request. */
  readonly webhook: WebhookRow | null;
}

/**
 * One endpoint's queue (issue 4 §1: "a slow or dead endpoint never delays the others"): at most
 * `concurrency` attempts in flight, and as many again claimed and waiting, so the dispatcher
 * never claims more for an endpoint than it can start soon (a claim lapses after two timeouts).
 */
export class Lane {
  private inFlight = 0;
  private readonly waiting: Job[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly run: (job: Job) => Promise<void>,
  ) {}

  /** Jobs it can take now. */
  get free(): number {
    return 2 * this.concurrency - this.inFlight - this.waiting.length;
  }

  get idle(): boolean {
    return this.inFlight === 0 && this.waiting.length === 0;
  }

  push(job: Job): void {
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
      void this.run(job).finally(() => {
        this.inFlight--;
        this.next();
      });
    }
  }
}

/** The lane key of a webhook: its endpoint's origin (deleted webhooks share one lane). */
export function laneKey(webhook: WebhookRow | null): string {
  if (webhook === null) return "deleted:";
  try {
    return new URL(webhook.endpoint).origin;
  } catch {
    return webhook.endpoint;
  }
}
