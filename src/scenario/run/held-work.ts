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
}
