/** Work under way, for `idle()`: a test (or a stop) waits until nothing is left running. */
export class Tracker {
  private readonly running = new Set<Promise<unknown>>();

  track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    const done = () => this.running.delete(work);
    work.then(done, done);
    return work;
  }

  /** Resolves once nothing tracked is running, including what finishing work started. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
