import type { Clock } from "../core/clock.ts";

/**
 * A device's own real-time clock: it starts off by `offsetMs` from the lab's time and runs fast
 * or slow by `driftPpm` until a central writes Current Time (CTS 1.1 §3.1), which sets it to
 * the written time and starts the drift again from there.
 */
export class DeviceClock {
  private baseDevice: number;
  private baseLab: number;

  constructor(
    private readonly lab: Clock,
    offsetMs = 0,
    private readonly driftPpm = 0,
  ) {
    this.baseLab = lab.now();
    this.baseDevice = this.baseLab + offsetMs;
  }

  now(): number {
    const elapsed = this.lab.now() - this.baseLab;
    return Math.round(this.baseDevice + elapsed * (1 + this.driftPpm / 1e6));
  }

  set(deviceMs: number): void {
    this.baseLab = this.lab.now();
    this.baseDevice = deviceMs;
  }

  /** Device time minus lab time, ms. */
  error(): number {
    return this.now() - this.lab.now();
  }
}
