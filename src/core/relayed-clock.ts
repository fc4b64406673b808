import type { Clock, TimerHandle } from "./clock.ts";
import { RpmlabError } from "./errors.ts";

/**
 * Another thread's Clock, as that thread last reported it: `now()` is the time given to set().
 * For a worker thread that stamps times but never waits (the ingestion worker): the lab's clock,
 * virtual or system, lives in the main thread, and each request to the worker carries its now.
 */
export class RelayedClock implements Clock {
  constructor(private current: number) {}

  set(now: number): void {
    this.current = now;
  }

  now(): number {
    return this.current;
  }

  setTimeout(): TimerHandle {
    throw notHere();
  }

  clearTimeout(): void {
    throw notHere();
  }

  sleep(): Promise<void> {
    return Promise.reject(notHere());
  }
}

function notHere(): RpmlabError {
  return new RpmlabError("E_USAGE", "a relayed clock only tells the time: wait on the main clock");
}
