import type { Clock, TimerHandle } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import { TypedEvents } from "../core/events.ts";
import type { Rng } from "../core/rng.ts";

/**
 * How a modem's cellular link behaves. Signal strength is on the spec's 0–30 scale (spec 2.2,
 * last_signal_strength); it wanders around `meanSignal`. Outages are the network's (the carrier
 * is down: the modem may see a signal but cannot attach); coverage holes are the place's (the
 * patient carries the device where there is no signal: signal reads 0). Both come as random
 * episodes (Poisson arrivals, exponential durations) and through the fault hooks.
 */
export interface LinkProfile {
  /** Signal strength the walk returns to, 0–30. */
  readonly meanSignal: number;
  /** Standard deviation of one step of the walk. */
  readonly signalStep: number;
  /** How often the signal is sampled (ms). */
  readonly sampleEveryMs: number;
  /** One-way latency of a message: median and uniform jitter either side (ms). */
  readonly latencyMs: number;
  readonly latencyJitterMs: number;
  /** Uplink throughput (bytes per second); a message takes size / bandwidth on top of latency. */
  readonly bandwidthBytesPerSec: number;
  /** Random network outages per day, and their mean length (ms). 0 per day: none. */
  readonly outagesPerDay: number;
  readonly outageMeanMs: number;
  /** Random coverage holes per day, and their mean length (ms). */
  readonly coverageHolesPerDay: number;
  readonly coverageHoleMeanMs: number;
}

/**
 * An LTE-M modem indoors: a fair signal (18 of 30, about −75 dBm), 150 ms ± 100 ms, 20 kB/s,
 * an outage every other day of about 20 minutes, a coverage hole a day of about 10 minutes.
 */
export const DEFAULT_LINK_PROFILE: LinkProfile = {
  meanSignal: 18,
  signalStep: 2,
  sampleEveryMs: 5 * 60_000,
  latencyMs: 150,
  latencyJitterMs: 100,
  bandwidthBytesPerSec: 20_000,
  outagesPerDay: 0.5,
  outageMeanMs: 20 * 60_000,
  coverageHolesPerDay: 1,
  coverageHoleMeanMs: 10 * 60_000,
};

/** A link that never fails on its own (faults only through the hooks): tests and drills. */
export const STEADY_LINK_PROFILE: LinkProfile = {
  ...DEFAULT_LINK_PROFILE,
  signalStep: 0,
  outagesPerDay: 0,
  coverageHolesPerDay: 0,
};

/** Why the link is down, or "up". Outage wins over a coverage hole, which wins over no signal. */
export type LinkCause = "up" | "outage" | "coverage-hole" | "no-signal" | "stopped";

export interface LinkChange {
  readonly up: boolean;
  readonly cause: LinkCause;
  readonly at: number;
  readonly signal: number;
}

export interface LinkEvents extends Record<string, unknown> {
  /** The link went up or down (emitted on each flip only). */
  change: LinkChange;
}

export interface CellularLinkOptions {
  readonly clock: Clock;
  /** Fork it per modem: the walk and the episodes draw from it alone. */
  readonly rng: Rng;
  readonly profile?: Partial<LinkProfile>;
  /** Outages at given instants (ms since the epoch), e.g. from a scenario. */
  readonly scheduledOutages?: readonly { readonly atMs: number; readonly forMs: number }[];
}

const DAY_MS = 86_400_000;
const MAX_SIGNAL = 30;
/** Samples of the walk looked ahead at a time: a day's at the default 5-minute period. */
const WALK_LOOKAHEAD = 288;

/** An episode that ends at an instant, or only on restore(). */
type Episode = { until: number; timer: TimerHandle | undefined } | null;

/**
 * A seeded cellular link on the Clock. Down while stopped, during an outage or a coverage hole,
 * or when the signal reads 0. Nothing is sent while it is down (UplinkSession checks `up`).
 */
export class CellularLink {
  readonly events = new TypedEvents<LinkEvents>();
  readonly profile: LinkProfile;
  private readonly clock: Clock;
  private readonly rng: Rng;
  private readonly walk: Rng;
  /**
   * Transfers' latency, a stream of its own: drawn from the episodes' stream, every message sent
   * (how many depends on batching, so on real I/O) moved every later outage and coverage hole.
   */
  private readonly latency: Rng;
  private running = false;
  /** The walk's value after the samples applied so far. */
  private walkSignal: number;
  /** When the first sample not yet applied is due; infinite while stopped. */
  private nextSampleAt = Number.POSITIVE_INFINITY;
  /** Steps of the walk drawn from its Rng ahead of their samples, in order. */
  private readonly steps: number[] = [];
  private walkTimer: TimerHandle | undefined;
  private outageEpisode: Episode = null;
  private holeEpisode: Episode = null;
  private readonly timers = new Set<TimerHandle>();
  private lastUp = false;

  constructor(private readonly options: CellularLinkOptions) {
    this.profile = { ...DEFAULT_LINK_PROFILE, ...options.profile };
    checkProfile(this.profile);
    this.clock = options.clock;
    this.rng = options.rng.fork("episodes");
    this.walk = options.rng.fork("signal");
    this.latency = options.rng.fork("latency");
    this.walkSignal = clampSignal(this.profile.meanSignal);
  }

  /** Signal strength now, 0–30 (0 in a coverage hole or while stopped). */
  get signal(): number {
    this.catchUp();
    return this.running && this.holeEpisode === null ? this.walkSignal : 0;
  }

  get up(): boolean {
    return this.cause === "up";
  }

  get cause(): LinkCause {
    if (!this.running) return "stopped";
    if (this.outageEpisode !== null) return "outage";
    if (this.holeEpisode !== null) return "coverage-hole";
    this.catchUp();
    return this.walkSignal === 0 ? "no-signal" : "up";
  }

  /** Powers the modem on: sampling, random episodes and scheduled outages start. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.nextSampleAt = this.clock.now() + this.profile.sampleEveryMs;
    this.planWalk();
    this.nextRandom("outage");
    this.nextRandom("coverage-hole");
    for (const { atMs, forMs } of this.options.scheduledOutages ?? []) {
      this.after(atMs - this.clock.now(), () => this.outage(forMs));
    }
    this.changed();
  }

  /** Powers the modem off: every timer is cleared, the link is down. */
  stop(): void {
    if (!this.running) return;
    this.catchUp();
    this.running = false;
    this.nextSampleAt = Number.POSITIVE_INFINITY;
    for (const timer of this.timers) this.clock.clearTimeout(timer);
    this.timers.clear();
    this.walkTimer = undefined;
    this.outageEpisode = null;
    this.holeEpisode = null;
    this.changed();
  }

  /** Fault hook: a network outage for `forMs`, or until restore() when not given. */
  outage(forMs?: number): void {
    this.outageEpisode = this.episode(this.outageEpisode, forMs, () => {
      this.outageEpisode = null;
    });
    this.changed();
  }

  /** Fault hook: a coverage hole (signal 0) for `forMs`, or until restore(). */
  coverageHole(forMs?: number): void {
    this.holeEpisode = this.episode(this.holeEpisode, forMs, () => {
      this.holeEpisode = null;
    });
    this.changed();
  }

  /** Fault hook: ends any outage and coverage hole now. */
  restore(): void {
    for (const e of [this.outageEpisode, this.holeEpisode]) {
      if (e?.timer !== undefined) this.forget(e.timer);
    }
    this.outageEpisode = null;
    this.holeEpisode = null;
    this.changed();
  }

  /** Fault hook: sets the walk's signal (0 takes the link down until the walk moves it). */
  setSignal(signal: number): void {
    this.catchUp();
    this.walkSignal = clampSignal(signal);
    if (this.running) this.planWalk();
    this.changed();
  }

  /** How long a message of `bytes` takes to reach the network (latency plus transfer), ms. */
  transferMs(bytes: number): number {
    const { latencyMs, latencyJitterMs, bandwidthBytesPerSec } = this.profile;
    const latency = latencyMs + this.latency.uniform(-latencyJitterMs, latencyJitterMs);
    return Math.max(0, Math.round(latency + (bytes * 1000) / bandwidthBytesPerSec));
  }

  /**
   * The signal is sampled every sampleEveryMs while the modem runs: a mean-reverting walk
   * (AR(1) with φ = 0.8) that drifts but stays near its mean. Its samples are applied when the
   * signal is read, not by a clock event each (a thousand modems made 8.6 million events a
   * month, most of a scenario's). A clock event comes only at a sample that takes the signal to
   * 0 or back (the link goes down or up then), or a day on to look further. The steps are drawn
   * from the walk's own Rng in sample order whenever they are drawn, so the signal at every
   * instant is what sampling each in turn gives. A sample due at the very instant of a read is
   * applied after it, as a sample event scheduled five minutes before would run after the
   * events scheduled earlier for that instant (a check-in's).
   */
  private planWalk(): void {
    if (this.walkTimer !== undefined) this.forget(this.walkTimer);
    this.catchUp();
    const every = this.profile.sampleEveryMs;
    const silent = this.walkSignal === 0;
    let value = this.walkSignal;
    let at = this.nextSampleAt;
    for (let i = 0; i < WALK_LOOKAHEAD; i++, at += every) {
      value = this.walkStep(value, i);
      if ((value === 0) !== silent) {
        this.walkTimer = this.after(at - this.clock.now(), () => {
          this.catchUp(true);
          this.changed();
          this.planWalk();
        });
        return;
      }
    }
    this.walkTimer = this.after(at - every - this.clock.now(), () => this.planWalk());
  }

  /** Applies the samples due before now (with `atNow`, also the one due now). */
  private catchUp(atNow = false): void {
    const now = this.clock.now();
    while (this.nextSampleAt < now || (atNow && this.nextSampleAt === now)) {
      this.walkSignal = this.walkStep(this.walkSignal, 0);
      this.steps.shift();
      this.nextSampleAt += this.profile.sampleEveryMs;
    }
  }

  /** The walk's value one sample after `value`, with the `ahead`-th step not yet applied. */
  private walkStep(value: number, ahead: number): number {
    const { meanSignal, signalStep } = this.profile;
    while (this.steps.length <= ahead) this.steps.push(this.walk.normal(0, signalStep));
    return clampSignal(meanSignal + 0.8 * (value - meanSignal) + this.steps[ahead]!);
  }

  private nextRandom(kind: "outage" | "coverage-hole"): void {
    const perDay =
      kind === "outage" ? this.profile.outagesPerDay : this.profile.coverageHolesPerDay;
    if (perDay <= 0) return;
    const meanMs = kind === "outage" ? this.profile.outageMeanMs : this.profile.coverageHoleMeanMs;
    this.after(exponential(this.rng, DAY_MS / perDay), () => {
      const forMs = Math.max(1000, Math.round(exponential(this.rng, meanMs)));
      if (kind === "outage") this.outage(forMs);
      else this.coverageHole(forMs);
      this.nextRandom(kind);
    });
  }

  /** An episode that lasts at least until the current one would end, or for good. */
  private episode(current: Episode, forMs: number | undefined, end: () => void): Episode {
    if (forMs !== undefined && !(forMs > 0)) {
      throw new RpmlabError("E_USAGE", `a link fault lasts a positive time, got ${forMs} ms`, {
        field: "forMs",
      });
    }
    const until = forMs === undefined ? Number.POSITIVE_INFINITY : this.clock.now() + forMs;
    if (current !== null && current.until >= until) return current;
    if (current?.timer !== undefined) this.forget(current.timer);
    const timer = Number.isFinite(until)
      ? this.after(until - this.clock.now(), () => {
          end();
          this.changed();
        })
      : undefined;
    return { until, timer };
  }

  private after(delayMs: number, fn: () => void): TimerHandle {
    // Whole milliseconds: every instant the lab prints or stores is one.
    const timer: TimerHandle = this.clock.setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, Math.round(delayMs));
    this.timers.add(timer);
    return timer;
  }

  private forget(timer: TimerHandle): void {
    this.clock.clearTimeout(timer);
    this.timers.delete(timer);
  }

  private changed(): void {
    const up = this.up;
    if (up === this.lastUp) return;
    this.lastUp = up;
    this.events.emit("change", {
      up,
      cause: this.cause,
      at: this.clock.now(),
      signal: this.signal,
    });
  }
}

function clampSignal(value: number): number {
  return Math.min(MAX_SIGNAL, Math.max(0, Math.round(value)));
}

function exponential(rng: Rng, mean: number): number {
  return -Math.log(1 - rng.next()) * mean;
}

function checkProfile(p: LinkProfile): void {
  const bad = (field: keyof LinkProfile, why: string) =>
    new RpmlabError("E_CONFIG_INVALID", `link ${field} ${why}, got ${p[field]}`, { field });
  if (!(p.meanSignal >= 0 && p.meanSignal <= MAX_SIGNAL)) throw bad("meanSignal", "must be 0–30");
  for (const field of ["sampleEveryMs", "bandwidthBytesPerSec"] as const) {
    if (!(p[field] > 0)) throw bad(field, "must be > 0");
  }
  for (const field of [
    "signalStep",
    "latencyMs",
    "latencyJitterMs",
    "outagesPerDay",
    "outageMeanMs",
    "coverageHolesPerDay",
    "coverageHoleMeanMs",
  ] as const) {
    if (!(p[field] >= 0)) throw bad(field, "must be >= 0");
  }
  if (p.latencyJitterMs > p.latencyMs) throw bad("latencyJitterMs", "must not exceed latencyMs");
}
