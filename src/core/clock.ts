/**
 * Time for the whole lab. Nothing outside src/core reads the wall clock or arms raw timers:
 * everything that waits or timestamps takes a Clock, so scenarios can run on virtual time.
 */
export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  /** Milliseconds since the Unix epoch, UTC. */
  now(): number;
  /** Runs `fn` once after `delayMs` of this clock's time. */
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** Resolves after `delayMs` of this clock's time. */
  sleep(delayMs: number): Promise<void>;
}

/**
 * A view of `clock` that reads whole milliseconds (floored), timers unchanged: for parts that
 * keep epoch ms as integers (the store's bigint columns) when they share a virtual clock with
 * emulated BLE, whose timing (1.25 ms connection intervals, Vol 6 Part B §4.5.1) puts instants
 * between milliseconds.
 */
export class WholeMillisecondClock implements Clock {
  constructor(private readonly clock: Clock) {}

  now(): number {
    return Math.floor(this.clock.now());
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    return this.clock.setTimeout(fn, delayMs);
  }

  clearTimeout(handle: TimerHandle): void {
    this.clock.clearTimeout(handle);
  }

  sleep(delayMs: number): Promise<void> {
    return this.clock.sleep(delayMs);
  }
}

/** The longest delay a Node timer takes (a signed 32-bit count of milliseconds). */
const MAX_TIMER_MS = 0x7fff_ffff;

/** Wall-clock time and real timers: `rpmlab serve` and real hardware. */
export class SystemClock implements Clock {
  private nextId = 1;
  private readonly timers = new Map<number, NodeJS.Timeout>();

  now(): number {
    return Date.now();
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const id = this.nextId++;
    // Node fires a delay past 2^31 − 1 ms (24.8 days) after 1 ms: a longer one waits in steps.
    const arm = (left: number): void => {
      const step = Math.min(left, MAX_TIMER_MS);
      const timer = setTimeout(() => {
        if (left > step) return arm(left - step);
        this.timers.delete(id);
        fn();
      }, step);
      this.timers.set(id, timer);
    };
    arm(Math.max(0, delayMs));
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    const timer = this.timers.get(handle.id);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.timers.delete(handle.id);
    }
  }

  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, delayMs));
  }

  /** Cancels every pending timer, so a stopped lab never holds the process open. */
  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
