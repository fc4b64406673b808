/** Work under way, for `idle()`: a test (or a stop) waits until nothing is left running. */
export class Tracker {
  private readonly running = new Set<Promise<unknown>>();

  track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    // Not a named closure: run through tsx (bin/rpmlab), each would be named with a
    // defineProperty call (esbuild's keepNames), about a microsecond per delivery.
    work.then(
      () => this.running.delete(work),
      () => this.running.delete(work),
    );
    return work;
  }

  /** Resolves once nothing tracked is running, including what finishing work started. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
