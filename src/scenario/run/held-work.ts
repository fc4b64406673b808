import { type TimedWork, whenAllIdle } from "../../core/timed-work.ts";

/**
 * Work a scenario's events started that the clock must not outrun (an API action's calls, a
 * delivered box powering on): the runner waits for it after each event and at each step's end.
 * A failure is kept, the first one, for the runner to throw.
 */
export class HeldWork {
  private readonly pending = new Set<Promise<unknown>>();
  private firstFailure: unknown;

  get failure(): unknown {
    return this.firstFailure;
  }

  add(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => {
      this.firstFailure ??= error;
    });
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  /** Resolves once none is left, including work the held work started; undefined when none is. */
  done(): Promise<void> | undefined {
    if (this.pending.size === 0) return undefined;
    return (async () => {
      while (this.pending.size > 0) await Promise.all([...this.pending]);
    })();
  }

  /**
   * What the clock waits for after each event: this work, and the lab's own timed work (a
   * shipment's transition on PostgreSQL commits after a network round trip: moving on meanwhile
   * stamped it, and all it set off, with a later time, run by run). Each may start the other (a
   * delivered box powers on; an API action orders one). Undefined when neither is under way.
   */
  doneWith(timed: readonly TimedWork[]): Promise<void> | undefined {
    const pending = () => this.done() ?? whenAllIdle(timed);
    const first = pending();
    if (first === undefined) return undefined;
    return (async () => {
      for (let work: Promise<void> | undefined = first; work !== undefined; work = pending()) {
        await work;
      }
    })();
  }
}
