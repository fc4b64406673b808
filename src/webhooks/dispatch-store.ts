import type { Store } from "../store/store.ts";
import type { WebhookRow } from "../store/types-ingest.ts";
import type { AttemptOutcome, DeliveryRow } from "../store/types-webhooks.ts";
import { expandOutbox } from "./expand.ts";
import { laneKey } from "./lanes.ts";
import type { StatusMetrics } from "./status-metrics.ts";

/**
 * Room in the dispatcher's lanes, by lane key (laneKey()); a lane not listed is one the
 * dispatcher has not opened yet, with `fresh` room. Plain data: it crosses to a worker thread.
 */
export interface LaneRoom {
  readonly lanes: Readonly<Record<string, number>>;
  readonly fresh: number;
}

/** A delivery claimed for the dispatcher, with its webhook (null: deleted meanwhile). */
export interface ClaimedDelivery {
  readonly delivery: DeliveryRow;
  readonly webhook: WebhookRow | null;
}

export interface ExpandResult {
  /** Outbox entries may be left (the batch or the lanes were full). */
  readonly more: boolean;
  /** Webhooks given deliveries that are due and not claimed (their lanes were full). */
  readonly unclaimed: readonly string[];
  /** Deliveries created already claimed: the lanes had room for them. */
  readonly claimed: readonly ClaimedDelivery[];
}

export interface ExchangeResult {
  /** Per webhook asked about: what was claimed, and whether it asked for more than was due. */
  readonly claims: readonly {
    readonly webhookId: string;
    readonly rows: readonly ClaimedDelivery[];
    readonly exhausted: boolean;
  }[];
}

/**
 * What the dispatcher asks of the store, in a few coarse calls so they can run in another
 * thread (WorkerDispatchStore): the dispatcher keeps the lanes and the HTTP requests, the store
 * side does every query, and each call carries the dispatcher's clock time.
 */
export interface DispatchStore {
  /** Turns a batch of outbox entries into deliveries (expand.ts), claiming what lanes can take. */
  expand(room: LaneRoom, now: number, until: number): Promise<ExpandResult>;
  /**
   * One transaction: records the finished attempts, then claims due deliveries of the `hot`
   * webhooks, as many as their lanes have room for.
   */
  exchange(
    outcomes: readonly AttemptOutcome[],
    hot: readonly string[],
    room: LaneRoom,
    now: number,
    until: number,
  ): Promise<ExchangeResult>;
  dueWebhooks(now: number): Promise<string[]>;
  nextDue(): Promise<number | null>;
  release(ids: readonly string[], at: number): Promise<void>;
  prune(before: number): Promise<number>;
  close(): Promise<void>;
}

/** Takes from a LaneRoom as it goes: webhooks sharing an endpoint share its room. */
class RoomLeft {
  private readonly left = new Map<string, number>();

  constructor(private readonly room: LaneRoom) {}

  take(webhook: WebhookRow | null, wanted = 1): number {
    const key = laneKey(webhook);
    const left = this.left.get(key) ?? this.room.lanes[key] ?? this.room.fresh;
    const taken = Math.max(0, Math.min(left, wanted));
    this.left.set(key, left - taken);
    return taken;
  }
}

/** The dispatcher's queries on a Store in this thread (and in the worker of WorkerDispatchStore). */
export class StoreDispatch implements DispatchStore {
  constructor(
    private readonly store: Store,
    private readonly statusMetrics: StatusMetrics,
  ) {}

  async expand(room: LaneRoom, _now: number, until: number): Promise<ExpandResult> {
    const left = new RoomLeft(room);
    const { more, created, claimed } = await expandOutbox(this.store, this.statusMetrics, {
      reserve: (webhook) => left.take(webhook) === 1,
      until,
    });
    const held = new Set(claimed.map((c) => c.delivery.id));
    const unclaimed = new Set(created.filter((d) => !held.has(d.id)).map((d) => d.webhookId));
    return { more, unclaimed: [...unclaimed], claimed };
  }

  async exchange(
    outcomes: readonly AttemptOutcome[],
    hot: readonly string[],
    room: LaneRoom,
    now: number,
    until: number,
  ): Promise<ExchangeResult> {
    return this.store.transaction(async (tx) => {
      if (outcomes.length > 0) await tx.webhookDeliveries.record(outcomes);
      if (hot.length === 0) return { claims: [] };
      const webhooks = new Map((await tx.webhooks.getMany(hot)).map((w) => [w.id, w]));
      const left = new RoomLeft(room);
      const claims: ExchangeResult["claims"][number][] = [];
      for (const webhookId of hot) {
        const webhook = webhooks.get(webhookId) ?? null;
        const asked = left.take(webhook, Number.MAX_SAFE_INTEGER);
        if (asked === 0) continue;
        const rows = await tx.webhookDeliveries.claim(webhookId, { now, until, limit: asked });
        claims.push({
          webhookId,
          rows: rows.map((delivery) => ({ delivery, webhook })),
          exhausted: rows.length < asked,
        });
      }
      return { claims };
    });
  }

  dueWebhooks(now: number): Promise<string[]> {
    return this.store.webhookDeliveries.dueWebhooks(now);
  }

  nextDue(): Promise<number | null> {
    return this.store.webhookDeliveries.nextDue();
  }

  release(ids: readonly string[], at: number): Promise<void> {
    return this.store.webhookDeliveries.release(ids, at);
  }

  prune(before: number): Promise<number> {
    return this.store.webhookDeliveries.prune(before);
  }

  /** The store is the caller's. */
  async close(): Promise<void> {}
}
