import { Rng } from "../../src/core/rng.ts";
import type { WebhookRow } from "../../src/store/types-ingest.ts";
import type { DeliveryRow } from "../../src/store/types-webhooks.ts";
import type {
  ClaimedDelivery,
  DispatchStore,
  ExchangeResult,
  ExpandResult,
  LaneRoom,
} from "../../src/webhooks/dispatch-store.ts";
import { laneKey } from "../../src/webhooks/lanes.ts";

/**
 * The webhook benchmark's dispatcher without a store (test/bench/webhooks.ts): a DispatchStore
 * that answers every expansion and claim at once, in this thread, with deliveries ready to send
 * (one webhook, one body) as many as the lanes have room for, and records nothing. What the
 * dispatcher costs beside its store — lanes, attempts, requests, outcomes — and so the most
 * any store could leave it.
 */
export class ReadyDeliveries implements DispatchStore {
  private made = 0;
  private readonly rng = new Rng("bench-webhooks/ready");

  constructor(
    private readonly webhook: WebhookRow,
    private readonly body: string,
    private readonly total: number,
  ) {}

  async expand(room: LaneRoom, now: number, until: number): Promise<ExpandResult> {
    const claimed = this.take(room, now, until);
    const more = this.made < this.total;
    return { more, unclaimed: more ? [this.webhook.id] : [], claimed };
  }

  async exchange(
    _outcomes: unknown,
    hot: readonly string[],
    room: LaneRoom,
    now: number,
    until: number,
  ): Promise<ExchangeResult> {
    if (!hot.includes(this.webhook.id)) return { claims: [] };
    const rows = this.take(room, now, until);
    return {
      claims: [{ webhookId: this.webhook.id, rows, exhausted: this.made >= this.total }],
    };
  }

  async dueWebhooks(): Promise<string[]> {
    return this.made < this.total ? [this.webhook.id] : [];
  }

  async nextDue(): Promise<number | null> {
    return null;
  }

  async release(): Promise<void> {}

  async prune(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {}

  private take(room: LaneRoom, now: number, until: number): ClaimedDelivery[] {
    const free = room.lanes[laneKey(this.webhook)] ?? room.fresh;
    const count = Math.max(0, Math.min(free, this.total - this.made));
    return Array.from({ length: count }, () => ({
      delivery: this.delivery(now, until),
      webhook: this.webhook,
    }));
  }

  private delivery(now: number, until: number): DeliveryRow {
    return readyDelivery(this.webhook, this.body, this.rng.uuidV7(now), ++this.made, now, until);
  }
}

/** A measurement delivery of `webhook`, claimed until `until`, as a claim returns it. */
export function readyDelivery(
  webhook: WebhookRow,
  body: string,
  id: string,
  measurementId: number,
  now: number,
  until: number,
): DeliveryRow {
  return {
    id,
    accountId: webhook.accountId,
    webhookId: webhook.id,
    event: "MEASUREMENT",
    body,
    state: "pending",
    retry: true,
    test: false,
    attempts: 0,
    manualAttempts: 0,
    nextAttemptAt: until,
    inFlight: true,
    hwiDeviceId: null,
    patientId: null,
    measurementIds: [measurementId],
    created: now,
    modified: now,
  };
}
