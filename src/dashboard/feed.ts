import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Clock } from "../core/clock.ts";
import type { TypedEvents } from "../core/events.ts";
import type { Logger } from "../core/logger.ts";
import type { FulfilmentEvents } from "../fulfilment/events.ts";
import type { IngestEvents, StoredMeasurement } from "../ingest/events.ts";
import type { Store } from "../store/store.ts";
import type { DispatcherEvents } from "../webhooks/dispatcher.ts";
import {
  activatedJson,
  deadLetterJson,
  type FeedEvent,
  fulfilmentJson,
  gatewayJson,
  iso,
  readingJson,
  webhookJson,
} from "./feed-events.ts";

/**
 * Records of one batch sent as `reading` events (each read back from the store); the `batch`
 * event still counts them all. A batch of a busy `serve` holds thousands: reading each back for
 * a page that shows the latest few would cost more than storing them did.
 */
export const FEED_READINGS_PER_BATCH = 20;

type Subscriber = (event: FeedEvent) => void;

/**
 * The lab's live feed (DESIGN "dashboard"): what ingestion, the webhook dispatcher and the device
 * services announce, as FeedEvents, to every subscriber (an open GET /lab/v1/events/). The
 * sources are attached by whoever has them: the API's own fulfilment events always, a running
 * lab's ingestor and dispatcher by the lab. With no subscriber every listener returns at once,
 * so a scenario run pays nothing for it.
 */
export class LabFeed {
  private readonly subscribers = new Set<Subscriber>();
  private readonly detach: (() => void)[] = [];

  constructor(
    private readonly deps: {
      readonly store: Store;
      readonly clock: Clock;
      readonly logger?: Logger;
      /** Gives readings their units (readingJson). */
      readonly catalogue?: Catalogue;
    },
  ) {}

  /** The lab's time, as the `clock` event tells it. */
  clockEvent(): FeedEvent {
    return { type: "clock", now: iso(this.deps.clock.now()) };
  }

  /** Calls `subscriber` with every event from now on; the returned function stops it. */
  subscribe(subscriber: Subscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  get listening(): boolean {
    return this.subscribers.size > 0;
  }

  attachFulfilment(events: TypedEvents<FulfilmentEvents>): void {
    this.detach.push(
      events.on("fulfilment.status", (e) =>
        this.send(() => ({ type: "fulfilment", ...fulfilmentJson(e) })),
      ),
      events.on("device.activated", (e) =>
        this.send(() => ({ type: "activated", ...activatedJson(e) })),
      ),
    );
  }

  attachIngest(events: TypedEvents<IngestEvents>): void {
    this.detach.push(
      events.on("measurement.stored", ({ rows }) => {
        if (!this.listening || rows.length === 0) return;
        this.publish({ type: "batch", stored: rows.length, at: iso(this.deps.clock.now()) });
        void this.readings(rows.slice(-FEED_READINGS_PER_BATCH));
      }),
      events.on("gateway.status", ({ gateway, online, receivedAt }) =>
        this.send(() => ({ type: "gateway", ...gatewayJson(gateway, online, receivedAt) })),
      ),
      events.on("dead_letter", ({ row }) =>
        this.send(() => ({ type: "dead_letter", ...deadLetterJson(row) })),
      ),
    );
  }

  attachDispatcher(events: TypedEvents<DispatcherEvents>): void {
    this.detach.push(
      events.on("attempt", ({ delivery, outcome }) =>
        this.send(() => ({ type: "webhook", ...webhookJson(delivery, outcome) })),
      ),
    );
  }

  /** Stops listening to the sources and forgets the subscribers. */
  close(): void {
    for (const off of this.detach.splice(0)) off();
    this.subscribers.clear();
  }

  /** Builds the event only when someone listens. */
  private send(build: () => FeedEvent): void {
    if (this.listening) this.publish(build());
  }

  private publish(event: FeedEvent): void {
    for (const subscriber of this.subscribers) subscriber(event);
  }

  /** The latest records of a batch, read back for their values (a store error is logged). */
  private async readings(rows: readonly StoredMeasurement[]): Promise<void> {
    try {
      for (const stored of rows) {
        const row = await this.deps.store.measurements.get(stored.id);
        if (row !== null)
          this.publish({ type: "reading", ...readingJson(row, this.deps.catalogue) });
      }
    } catch (error) {
      this.deps.logger?.warn({ err: error }, "live feed could not read stored measurements");
    }
  }
}
