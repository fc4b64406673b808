import type { TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { TimedWork } from "../core/timed-work.ts";
import { atomically } from "../fulfilment/deps.ts";
import type { FulfilmentEventBus } from "../fulfilment/simulator.ts";
import { supplyOrderChanged } from "./supply-events.ts";
import type { AsrDeps } from "./supply-requests.ts";
import { nextStep } from "./supply-timeline.ts";

export interface SupplyShippingDeps extends Omit<AsrDeps, "events"> {
  readonly events: FulfilmentEventBus;
  readonly logger?: Logger | undefined;
  /**
   * How often (ms of the Clock) to look for steps another process sharing the store scheduled;
   * 0 or absent: never (the store's only writer).
   */
  readonly resyncMs?: number | undefined;
}

/** Node timers overflow past 2^31-1 ms; a longer wait is armed in pieces. */
const MAX_TIMER_MS = 2_147_483_647;
/** After a failed step (the store briefly unreachable), look again this much later. */
const RETRY_AFTER_MS = 60_000;

/**
 * Moves supply orders along their timeline (supply-timeline.ts) on the lab's clock: one timer,
 * for the earliest step due; when it fires, every step due by then is applied in due order, each
 * in its own transaction with its webhook, at its due time (not the moment the timer ran: a
 * seed gives the same timeline however fast a virtual clock is driven). `supply.status` events
 * (a new order) re-arm it. `start()` first applies what fell due while the lab was down.
 * Processes sharing a store hear only their own events; with `resyncMs` each also looks again
 * now and then, so an order another process placed moves on even while that process is down.
 */
export class SupplyShipping implements TimedWork {
  private timer: { readonly handle: TimerHandle; readonly at: number } | undefined;
  private resyncTimer: TimerHandle | undefined;
  private running = false;
  private work: Promise<void> = Promise.resolve();
  /** Passes kicked and not finished. */
  private passes = 0;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: SupplyShippingDeps) {}

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.deps.events.on("supply.status", ({ nextAt }) => {
      if (nextAt !== null) this.arm(nextAt);
    });
    this.kick();
    await this.work;
    this.scheduleResync();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.disarm();
    if (this.resyncTimer !== undefined) this.deps.clock.clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
    await this.work;
  }

  get busy(): boolean {
    return this.passes > 0;
  }

  /** Resolves once no step is being applied. */
  whenIdle(): Promise<void> {
    return this.work;
  }

  private arm(at: number): void {
    if (!this.running) return;
    if (this.timer !== undefined && this.timer.at <= at) return;
    this.disarm();
    const { clock } = this.deps;
    const delay = Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS);
    const handle = clock.setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, delay);
    this.timer = { handle, at };
  }

  private scheduleResync(): void {
    const every = this.deps.resyncMs ?? 0;
    if (every <= 0 || !this.running) return;
    this.resyncTimer = this.deps.clock.setTimeout(() => {
      this.resyncTimer = undefined;
      this.kick();
      this.scheduleResync();
    }, every);
  }

  private disarm(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer.handle);
    this.timer = undefined;
  }

  /** Applies what is due, then arms the next; one pass at a time. */
  private kick(): void {
    this.passes++;
    this.work = this.work
      .then(() => this.applyDue())
      .then(
        (next) => {
          if (next !== undefined) this.arm(next);
        },
        (error: unknown) => {
          this.deps.logger?.error({ err: error }, "supply order step failed; retrying");
          this.arm(this.deps.clock.now() + RETRY_AFTER_MS);
        },
      )
      .finally(() => {
        this.passes--;
      });
  }

  /** Every step due now, earliest first; returns when the next one is due. */
  private async applyDue(): Promise<number | undefined> {
    const { store, clock, fulfilment, supplies } = this.deps;
    while (this.running) {
      const [due] = await store.supplyRequests.due(undefined, 1);
      if (due === undefined || due.nextAt === null) return undefined;
      if (due.nextAt > clock.now()) return due.nextAt;
      const at = due.nextAt;
      await atomically(this.deps, async (tx, events) => {
        // Removed (DELETE of a pending request) since it was read: nothing left to move.
        if ((await tx.supplyRequests.getById(due.id))?.step !== due.step) return;
        const patch = nextStep(fulfilment, due, at);
        // updated_on is when the step happened, as shipped_on and delivered_on are: a restart's
        // catch-up would otherwise stamp every step it applies with the same instant.
        const row = await tx.supplyRequests.update(
          due.id,
          patch === null ? { nextAt: null } : { ...patch, modified: at },
        );
        if (patch !== null) await supplyOrderChanged(tx, events, supplies, row);
      });
    }
    return undefined;
  }
}
