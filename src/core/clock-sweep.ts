import type { Clock, TimerHandle } from "./clock.ts";
import type { TimedWork } from "./timed-work.ts";

/**
 * Work run every `everyMs` of clock time (an hourly check, a retention sweep), one run at a
 * time: the next is armed when the last has finished. `run` handles its own failures; one that
 * escapes it is dropped so the schedule goes on. A virtual clock driver waits for a run under
 * way (TimedWork), as it waits for the lab's other timed work.
 */
export class ClockSweep implements TimedWork {
  private timer: TimerHandle | undefined;
  private running = false;
  private current: Promise<unknown> | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly everyMs: number,
    private readonly run: () => Promise<unknown>,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.arm();
  }

  /** No further run; resolves once a run under way has finished. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }

  get busy(): boolean {
    return this.current !== undefined;
  }

  whenIdle(): Promise<unknown> {
    return this.current ?? Promise.resolve();
  }

  private arm(): void {
    if (!this.running) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      const run = this.run()
        .catch(() => undefined)
        .finally(() => {
          this.current = undefined;
          this.arm();
        });
      this.current = run;
    }, this.everyMs);
  }
}
