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

/**
 * A real timer for any delay: Node fires one past 2^31 − 1 ms (24.8 days) after 1 ms, so a
 * longer delay waits in steps. Returns what cancels it.
 */
export function realTimeout(fn: () => void, delayMs: number): () => void {
  let timer: NodeJS.Timeout;
  const arm = (left: number): void => {
    const step = Math.min(left, MAX_TIMER_MS);
    timer = setTimeout(() => (left > step ? arm(left - step) : fn()), step);
  };
  arm(Math.max(0, delayMs));
  return () => clearTimeout(timer);
}

/** Wall-clock time and real timers: `rpmlab serve` and real hardware. */
export class SystemClock implements Clock {
  private nextId = 1;
  /** What cancels each pending timer. */
  private readonly timers = new Map<number, () => void>();

  now(): number {
    return Date.now();
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const id = this.nextId++;
    const cancel = realTimeout(() => {
      this.timers.delete(id);
      fn();
    }, delayMs);
    this.timers.set(id, cancel);
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.get(handle.id)?.();
    this.timers.delete(handle.id);
  }

  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, delayMs));
  }

  /** Cancels every pending timer, so a stopped lab never holds the process open. */
  dispose(): void {
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }
}
