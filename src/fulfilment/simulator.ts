import type { Catalogue } from "../catalogue/catalogue.ts";
import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { TimedWork } from "../core/timed-work.ts";
import type { Store } from "../store/store.ts";
import type { FulfilmentEventSink, FulfilmentEvents } from "./events.ts";
import { type DueOutcome, Orders } from "./orders.ts";
import { trackLegacyOrders } from "./shipment-intake.ts";

/** What the simulator listens on: the lab's event bus (a TypedEvents<FulfilmentEvents>). */
export interface FulfilmentEventBus extends FulfilmentEventSink {
  on<K extends keyof FulfilmentEvents & string>(
    name: K,
    listener: (payload: FulfilmentEvents[K]) => void,
  ): () => void;
}

export interface FulfilmentSimulatorDeps {
  readonly store: Store;
  readonly catalogue: Catalogue;
  readonly clock: Clock;
  readonly events: FulfilmentEventBus;
  readonly fulfilment: FulfilmentConfig;
  readonly logger?: Logger | undefined;
  /**
   * How often (ms of the Clock) to re-read every scheduled transition from the store, for those
   * another process sharing it scheduled; 0 or absent: never (the store's only writer).
   */
  readonly resyncMs?: number | undefined;
}

/**
 * Node timers overflow past 2^31-1 ms (about 24.8 days) and then fire at once; a longer wait is
 * armed in pieces (the timer re-arms when it fires early).
 */
const MAX_TIMER_MS = 2_147_483_647;

/** A failed transition (e.g. the database was briefly unreachable) is retried this often. */
const RETRIES = 3;
const RETRY_AFTER_MS = 60_000;

/**
 * The fulfilment simulator (issue 4 §2): a shipment's next transition is persisted with the
 * shipment; this arms one Clock timer per shipment for it, and applies it when due (orders.ts
 * runDue, one transaction per status change, events after the commit). It learns of new or
 * changed schedules from `shipment.scheduled` events, so the API, the admin's actions and its
 * own transitions all re-arm it the same way.
 *
 * `start()` gives orders that predate shipments theirs, applies every transition already due,
 * strictly in due order across shipments (a lab that was down catches up, losing nothing), then
 * arms the rest. Time comes only from the Clock: on a VirtualClock a 5-day shipment completes in
 * milliseconds of a virtual run; a transition's time is its due time, not the moment its timer
 * ran, so a seed reproduces the same timeline however fast the clock is driven. Errors are
 * logged and retried a few times, never thrown at the process.
 *
 * Processes sharing a store hear only their own events; with `resyncMs` each also re-reads the
 * schedule now and then, so a transition another process scheduled is applied even when that
 * process is down (runDue's step check lets only one process apply it).
 */
export class FulfilmentSimulator implements TimedWork {
  private readonly orders: Orders;
  private readonly timers = new Map<string, { handle: TimerHandle; step: number; at: number }>();
  private resyncTimer: TimerHandle | undefined;
  private readonly inflight = new Set<Promise<void>>();
  /**
   * Failed attempts of the step each shipment is retrying. Keyed with the step: a shipment an
   * admin moved (or cancelled) before its retry starts its next step with none counted.
   */
  private readonly failures = new Map<string, { step: number; count: number }>();
  private unsubscribe: (() => void) | undefined;
  private running = false;
  private catchingUp = false;

  constructor(private readonly deps: FulfilmentSimulatorDeps) {
    this.orders = new Orders(deps);
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.deps.events.on("shipment.scheduled", (e) => {
      if (!this.catchingUp) this.arm(e.shipmentId, e.step, e.nextAt);
    });
    this.catchingUp = true;
    try {
      const legacy = await trackLegacyOrders({
        ...this.deps,
        config: this.deps.fulfilment,
      });
      if (legacy > 0) {
        this.deps.logger?.info({ orders: legacy }, "pending orders from before shipments now ship");
      }
      await this.catchUp();
    } finally {
      this.catchingUp = false;
    }
    if (!this.running) return;
    for (const s of await this.deps.store.shipments.due()) this.armRead(s);
    this.scheduleResync();
  }

  /** Disarms every timer and waits for transitions already running. */
  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.resyncTimer !== undefined) this.deps.clock.clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
    for (const { handle } of this.timers.values()) this.deps.clock.clearTimeout(handle);
    this.timers.clear();
    await this.whenIdle();
  }

  get busy(): boolean {
    return this.inflight.size > 0;
  }

  /** Resolves once no transition is running (those they schedule at once included). */
  async whenIdle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** When the next armed transition is due, if any (to drive a VirtualClock step by step). */
  nextDue(): number | undefined {
    let next: number | undefined;
    for (const { at } of this.timers.values()) if (next === undefined || at < next) next = at;
    return next;
  }

  /** How many shipments have a transition armed. */
  get armed(): number {
    return this.timers.size;
  }

  private arm(shipmentId: string, step: number, at: number | null): void {
    const existing = this.timers.get(shipmentId);
    if (existing !== undefined) {
      this.deps.clock.clearTimeout(existing.handle);
      this.timers.delete(shipmentId);
    }
    // Nothing more to run (cancelled, delivered): no failures to remember.
    if (at === null) this.failures.delete(shipmentId);
    if (at === null || !this.running) return;
    const delay = Math.min(Math.max(0, at - this.deps.clock.now()), MAX_TIMER_MS);
    const handle = this.deps.clock.setTimeout(() => this.fire(shipmentId, step, at), delay);
    this.timers.set(shipmentId, { handle, step, at });
  }

  private scheduleResync(): void {
    const every = this.deps.resyncMs ?? 0;
    if (every <= 0 || !this.running) return;
    this.resyncTimer = this.deps.clock.setTimeout(() => {
      this.resyncTimer = undefined;
      const run = this.resync()
        .catch((error: unknown) => {
          this.deps.logger?.warn({ err: error }, "could not re-read the shipping schedule");
        })
        .finally(() => this.scheduleResync());
      const tracked = run.finally(() => this.inflight.delete(tracked));
      this.inflight.add(tracked);
    }, every);
  }

  /** Arms what the store schedules and this process has not armed (or armed for another step). */
  private async resync(): Promise<void> {
    for (const s of await this.deps.store.shipments.due()) {
      if (!this.running) return;
      const armed = this.timers.get(s.id);
      if (armed?.step !== s.step || armed.at !== s.nextAt) this.armRead(s);
    }
  }

  /**
   * Arms a shipment's step as the store read it, unless this process armed a later step while
   * the read was under way (a transition applied meanwhile, by a timer or an admin): the older
   * step's timer would find the shipment moved on and do nothing, and the later step would wait
   * for the next re-read (resyncMs, 30 s in serve), its webhook late and out of order.
   */
  private armRead(s: {
    readonly id: string;
    readonly step: number;
    readonly nextAt: number | null;
  }): void {
    const armed = this.timers.get(s.id);
    if (armed !== undefined && armed.step > s.step) return;
    this.arm(s.id, s.step, s.nextAt);
  }

  /**
   * A timer fired: its transition runs, with those of every other shipment armed for the same
   * instant, one at a time in id order — the order catch-up and start() take (shipments.due
   * orders by next_at, then id). Timers alone would run them in the order they were armed,
   * which a restart, or another process, changes: with a fixed duration (one patient's kit
   * ordered at once, or over a weekend) which box ships first, and so takes the patient's new
   * gateway the others join, depended on the simulator's history, not on the seed.
   */
  private fire(shipmentId: string, step: number, at: number): void {
    this.timers.delete(shipmentId);
    if (!this.running) return;
    const due = [{ shipmentId, step }];
    for (const [id, timer] of this.timers) {
      if (timer.at !== at) continue;
      this.deps.clock.clearTimeout(timer.handle);
      this.timers.delete(id);
      due.push({ shipmentId: id, step: timer.step });
    }
    due.sort((a, b) => (a.shipmentId < b.shipmentId ? -1 : a.shipmentId > b.shipmentId ? 1 : 0));
    const run = (async () => {
      for (const d of due) {
        if (!this.running) return;
        await this.runTimed(d.shipmentId, d.step, at);
      }
    })();
    const tracked = run.finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
  }

  /** A timed transition, re-armed when early, retried a few times when it fails; never throws. */
  private runTimed(shipmentId: string, step: number, at: number): Promise<void> {
    return this.orders
      .runDue(shipmentId, step)
      .then((outcome: DueOutcome) => {
        this.failures.delete(shipmentId);
        // Woken before its time (a long wait armed in pieces): wait for the rest.
        if (outcome === "early" && !this.timers.has(shipmentId)) this.arm(shipmentId, step, at);
      })
      .catch((error: unknown) => {
        const before = this.failures.get(shipmentId);
        const failed = (before?.step === step ? before.count : 0) + 1;
        this.failures.set(shipmentId, { step, count: failed });
        const retry = failed <= RETRIES && !this.timers.has(shipmentId);
        this.deps.logger?.error(
          { err: error, shipment: shipmentId, attempt: failed },
          retry
            ? "fulfilment transition failed; retrying"
            : "fulfilment transition failed; the order stays where it is until an admin moves it or the lab restarts",
        );
        if (retry) {
          this.arm(shipmentId, step, this.deps.clock.now() + RETRY_AFTER_MS * 2 ** (failed - 1));
        } else {
          this.failures.delete(shipmentId);
        }
      });
  }

  /** Applies every transition already due, earliest first, one at a time. */
  private async catchUp(): Promise<void> {
    const failed = new Set<string>();
    while (this.running) {
      const due = await this.deps.store.shipments.due(this.deps.clock.now(), failed.size + 1);
      const next = due.find((s) => !failed.has(s.id));
      if (next === undefined) return;
      try {
        const outcome = await this.orders.runDue(next.id, next.step);
        if (outcome !== "applied") failed.add(next.id);
      } catch (error) {
        failed.add(next.id);
        this.deps.logger?.error(
          { err: error, shipment: next.id },
          "fulfilment transition failed while catching up",
        );
      }
    }
  }
}
