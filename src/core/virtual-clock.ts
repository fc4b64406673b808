import { type Clock, realTimeout, type TimerHandle } from "./clock.ts";
import { RpmlabError } from "./errors.ts";
import { EventQueue } from "./event-queue.ts";

export interface VirtualClockOptions {
  /** Virtual time at creation, ms since the Unix epoch. */
  startMs: number;
  /**
   * Virtual milliseconds per real millisecond for `run()`. Infinity (the default) runs as fast
   * as possible; 60 replays an hour of virtual time in a real minute.
   */
  speed?: number;
}

export interface RunOptions {
  /** Stop once virtual time reaches this instant (events due exactly then still run). */
  until?: number;
  /**
   * Work an event started that must end before time moves on (a scenario's API call): awaited
   * after each event, once its continuations have settled. Without it, such work would end at
   * whichever later instant the next events happen to reach meanwhile.
   */
  held?: () => Promise<void> | undefined;
  /**
   * Ends a paced wait at once and returns, time where it was (Ctrl-C in `rpmlab demo`): at a
   * speed below 0.001 even the smallest step, a virtual ms, is more than a wall second.
   */
  signal?: AbortSignal;
}

/**
 * A discrete-event clock: time moves only when the next scheduled event runs. Events due at the
 * same instant run in the order they were scheduled (see EventQueue), so a seeded scenario
 * replays identically.
 */
export class VirtualClock implements Clock {
  private pace: number;
  private current: number;
  private seq = 0;
  private nextId = 1;
  private readonly queue = new EventQueue();

  constructor(options: VirtualClockOptions) {
    if (!Number.isFinite(options.startMs)) {
      throw new RpmlabError("E_CONFIG_INVALID", "clock.startMs must be a finite number", {
        field: "startMs",
      });
    }
    this.current = options.startMs;
    this.pace = checkedSpeed(options.speed ?? Number.POSITIVE_INFINITY);
  }

  /** Virtual milliseconds per real millisecond for `run()` (Infinity: as fast as possible). */
  get speed(): number {
    return this.pace;
  }

  /**
   * A new speed from the next step of `run()` on: a paced scenario's drain after its end runs
   * at Infinity, where nothing is left to watch.
   */
  setSpeed(speed: number): void {
    this.pace = checkedSpeed(speed);
  }

  now(): number {
    return this.current;
  }

  /** Number of events still waiting. */
  get pending(): number {
    return this.queue.size;
  }

  /** When the next event is due, or undefined when none waits (to step to it, runSync). */
  nextEventAt(): number | undefined {
    return this.queue.peek()?.at;
  }

  /** Schedules `fn` at an absolute virtual instant; an instant in the past means "now". */
  schedule(atMs: number, fn: () => void): TimerHandle {
    const id = this.nextId++;
    this.queue.push({ id, at: Math.max(atMs, this.current), seq: this.seq++, run: fn });
    return { id };
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    return this.schedule(this.current + Math.max(0, delayMs), fn);
  }

  clearTimeout(handle: TimerHandle): void {
    this.queue.cancel(handle.id);
  }

  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, delayMs));
  }

  /**
   * Runs due events synchronously until none is left or the next is after `until`, then sets
   * the time to `until` when given. Returns how many events ran. Promise continuations of those
   * events are not awaited: use `run()` for code that awaits the clock.
   */
  runSync(options: RunOptions = {}): number {
    let ran = 0;
    for (;;) {
      const next = this.queue.peek();
      if (next === undefined || (options.until !== undefined && next.at > options.until)) break;
      this.queue.pop();
      this.current = next.at;
      next.run();
      ran++;
    }
    if (options.until !== undefined && options.until > this.current) this.current = options.until;
    return ran;
  }

  /**
   * Runs events in order, letting every promise continuation settle after each one (so code that
   * awaits `sleep()` schedules its next step before time moves on). With a finite speed, waits
   * real time in proportion to the virtual gap, between events and up to `until` after the last
   * one, so time passes at that speed with or without events. Returns how many events ran.
   */
  async run(options: RunOptions = {}): Promise<number> {
    let ran = 0;
    // A function: the signal can abort during any await below.
    const aborted = () => options.signal?.aborted === true;
    await settle();
    for (;;) {
      if (aborted()) return ran;
      const next = this.queue.peek();
      const due = next !== undefined && (options.until === undefined || next.at <= options.until);
      const target = due ? next.at : options.until;
      if (target === undefined) break;
      if (Number.isFinite(this.pace) && target > this.current) {
        await realDelay((target - this.current) / this.pace, options.signal);
        if (aborted()) return ran;
        // Meanwhile an event may have been cancelled, or scheduled earlier than the target.
        const head = this.queue.peek();
        this.current = Math.min(head?.at ?? target, target);
        continue;
      }
      if (!due) break;
      this.queue.pop();
      this.current = next.at;
      next.run();
      ran++;
      await settle();
      await options.held?.();
    }
    if (options.until !== undefined && options.until > this.current) this.current = options.until;
    return ran;
  }
}

function checkedSpeed(speed: number): number {
  if (!(speed > 0)) {
    throw new RpmlabError("E_CONFIG_INVALID", `clock speed must be > 0, got ${speed}`, {
      field: "speed",
    });
  }
  return speed;
}

/** Lets pending microtasks and immediates run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Resolves after `ms`, or as soon as `signal` aborts. A real timer of any length (realTimeout):
 * at a speed below about 5·10⁻¹⁰ a virtual ms is over 24.8 wall days, which one Node timer
 * would run after 1 ms.
 */
function realDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const cancel = realTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
