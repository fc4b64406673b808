import type { Clock, TimerHandle } from "../../core/clock.ts";
import { RpmlabError } from "../../core/errors.ts";

/** ATT transaction timeout (Vol 3 Part F §3.3.3). */
export const ATT_TRANSACTION_TIMEOUT_MS = 30_000;

interface Item {
  confirmed: boolean;
  start: (done: () => void) => void;
  /** Why the value is no longer to be sent when its turn comes, if so. */
  unwanted: () => string | undefined;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * A server's notifications and indications in send order, with at most one indication waiting
 * for its confirmation on the bearer (Vol 3 Part F §3.4.7.2): what follows an indication waits
 * for it, so a measurement and its companion values arrive in the order the device sent them.
 * An indication unconfirmed for 30 s ends the bearer (§3.3.3: no more ATT PDUs are sent on it):
 * what is queued, and what is pushed after, fails until `clear` (the link is gone), and
 * `onTimeout` lets the host end the link.
 */
export class OutboundQueue {
  private readonly items: Item[] = [];
  private busy = false;
  private timer: TimerHandle | undefined;
  /** Set once a confirmation timed out, until the link is gone. */
  private timedOut: Error | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly onTimeout: () => void = () => undefined,
  ) {}

  /**
   * Queues one value; `confirmed` values wait for `done` from the host before the next goes. One
   * that `unwanted` gives a reason for when its turn comes (the central turned the CCCD off
   * meanwhile) is not sent, and fails with that reason.
   */
  push(
    confirmed: boolean,
    start: (done: () => void) => void,
    unwanted: () => string | undefined = () => undefined,
  ): Promise<void> {
    if (this.timedOut !== undefined) return Promise.reject(this.timedOut);
    return new Promise((resolve, reject) => {
      this.items.push({ confirmed, start, unwanted, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    if (this.busy) return;
    const item = this.items.shift();
    if (item === undefined) return;
    const reason = item.unwanted();
    if (reason !== undefined) {
      item.reject(new RpmlabError("E_BLE_GATT", `not sent: ${reason}`));
      this.next();
      return;
    }
    if (!item.confirmed) {
      item.start(() => undefined);
      item.resolve();
      this.next();
      return;
    }
    this.busy = true;
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
      this.timer = undefined;
      this.busy = false;
      if (error === undefined) item.resolve();
      else item.reject(error);
      // Not from inside the host's confirmation handler: bleno clears its "last indicated
      // attribute" after that handler returns, and would lose an indication sent within it.
      queueMicrotask(() => this.next());
    };
    this.timer = this.clock.setTimeout(() => {
      // The queue is failed before `finish` would send the next value.
      const error = new RpmlabError("E_BLE_TIMEOUT", "no Handle Value Confirmation within 30 s");
      this.timedOut = error;
      for (const queued of this.items.splice(0)) queued.reject(error);
      finish(error);
      this.onTimeout();
    }, ATT_TRANSACTION_TIMEOUT_MS);
    this.current = finish;
    item.start(() => finish());
  }

  private current: ((error?: Error) => void) | undefined;

  /** Drops everything queued (the link is gone); the next link's values go out again. */
  clear(reason: string): void {
    this.timedOut = undefined;
    const error = new RpmlabError("E_BLE_GATT", `not sent: ${reason}`);
    for (const item of this.items.splice(0)) item.reject(error);
    const current = this.current;
    this.current = undefined;
    if (this.busy) current?.(error);
  }
}
