import type { Clock, TimerHandle } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";

/**
 * One device's GATT requests, one at a time, after zigbee-herdsman's Waitress: a request's
 * timeout starts when it is sent (its turn comes), never while it waits in the queue, so a slow
 * discovery does not eat the time of the read queued behind it.
 */
export class RequestQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private closed: Error | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly device: string,
  ) {}

  run<T>(operation: string, timeoutMs: number, send: () => Promise<T>): Promise<T> {
    const result = this.tail.then(() => this.sendWithTimeout(operation, timeoutMs, send));
    this.tail = result.catch(() => undefined);
    return result;
  }

  private sendWithTimeout<T>(
    operation: string,
    timeoutMs: number,
    send: () => Promise<T>,
  ): Promise<T> {
    if (this.closed !== undefined) return Promise.reject(this.closed);
    return new Promise<T>((resolve, reject) => {
      let timer: TimerHandle | undefined = this.clock.setTimeout(() => {
        timer = undefined;
        reject(
          new RpmlabError(
            "E_BLE_TIMEOUT",
            `${this.device}: ${operation}: no answer within ${timeoutMs} ms`,
            {
              device: this.device,
              operation,
            },
          ),
        );
      }, timeoutMs);
      const settle = (): void => {
        if (timer !== undefined) this.clock.clearTimeout(timer);
        timer = undefined;
      };
      send().then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          reject(
            error instanceof RpmlabError
              ? error
              : new RpmlabError(
                  "E_BLE_GATT",
                  `${this.device}: ${operation}: ${(error as Error)?.message ?? error}`,
                  {
                    device: this.device,
                    operation,
                  },
                  error,
                ),
          );
        },
      );
    });
  }

  /** Waits for an event (e.g. an RACP response indication), timed from now. */
  waitFor<T>(
    operation: string,
    timeoutMs: number,
    arm: (resolve: (value: T) => void) => () => void,
  ): Promise<T> {
    return this.sendWithTimeout(operation, timeoutMs, () => {
      let disarm: () => void = () => undefined;
      return new Promise<T>((resolve) => {
        disarm = arm((value) => {
          disarm();
          resolve(value);
        });
      }).finally(() => disarm());
    });
  }

  /** Fails everything still queued (the link dropped). */
  close(reason: Error): void {
    this.closed = reason;
  }
}
