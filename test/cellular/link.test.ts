import { describe, expect, it } from "vitest";
import { CellularLink, type LinkChange, STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";

const START = Date.UTC(2026, 0, 1);
const MIN = 60_000;
const DAY = 86_400_000;

function linkOn(clock: VirtualClock, seed: string, profile = {}) {
  const link = new CellularLink({ clock, rng: new Rng(seed), profile });
  const changes: LinkChange[] = [];
  link.events.on("change", (c) => changes.push(c));
  return { link, changes };
}

describe("CellularLink", () => {
  it("is down until started and after stop, up in between", () => {
    const clock = new VirtualClock({ startMs: START });
    const { link, changes } = linkOn(clock, "a", STEADY_LINK_PROFILE);
    expect(link.up).toBe(false);
    expect(link.signal).toBe(0);
    link.start();
    expect(link.up).toBe(true);
    expect(link.signal).toBe(18);
    link.stop();
    expect(link.cause).toBe("stopped");
    expect(changes.map((c) => [c.up, c.cause])).toEqual([
      [true, "up"],
      [false, "stopped"],
    ]);
    expect(clock.pending).toBe(0);
  });

  it("goes down for an outage of a given length and comes back by itself", () => {
    const clock = new VirtualClock({ startMs: START });
    const { link, changes } = linkOn(clock, "a", STEADY_LINK_PROFILE);
    link.start();
    clock.runSync({ until: START + 10 * MIN });
    link.outage(30 * MIN);
    expect(link.up).toBe(false);
    expect(link.cause).toBe("outage");
    // An outage is the network's: the modem still sees a signal.
    expect(link.signal).toBeGreaterThan(0);
    clock.runSync({ until: START + 39 * MIN });
    expect(link.up).toBe(false);
    clock.runSync({ until: START + 40 * MIN });
    expect(link.up).toBe(true);
    expect(changes.map((c) => [c.up, c.cause, c.at - START])).toEqual([
      [true, "up", 0],
      [false, "outage", 10 * MIN],
      [true, "up", 40 * MIN],
    ]);
    link.stop();
  });

  it("keeps an open-ended outage or coverage hole until restore()", () => {
    const clock = new VirtualClock({ startMs: START });
    const { link } = linkOn(clock, "a", STEADY_LINK_PROFILE);
    link.start();
    link.coverageHole();
    expect(link.cause).toBe("coverage-hole");
    expect(link.signal).toBe(0);
    link.outage();
    expect(link.cause).toBe("outage");
    clock.runSync({ until: START + 30 * DAY });
    expect(link.up).toBe(false);
    link.restore();
    expect(link.up).toBe(true);
    expect(link.signal).toBe(18);
    link.stop();
  });

  it("a shorter fault inside a longer one does not end it early", () => {
    const clock = new VirtualClock({ startMs: START });
    const { link } = linkOn(clock, "a", STEADY_LINK_PROFILE);
    link.start();
    link.outage(60 * MIN);
    link.outage(5 * MIN);
    clock.runSync({ until: START + 30 * MIN });
    expect(link.up).toBe(false);
    clock.runSync({ until: START + 60 * MIN });
    expect(link.up).toBe(true);
    link.stop();
  });

  it("a signal of 0 takes the link down (no-signal) until it rises", () => {
    const clock = new VirtualClock({ startMs: START });
    const { link } = linkOn(clock, "a", STEADY_LINK_PROFILE);
    link.start();
    link.setSignal(0);
    expect(link.cause).toBe("no-signal");
    link.setSignal(40);
    expect(link.signal).toBe(30);
    expect(link.up).toBe(true);
    link.stop();
  });

  it("runs scheduled outages", () => {
    const clock = new VirtualClock({ startMs: START });
    const link = new CellularLink({
      clock,
      rng: new Rng("s"),
      profile: STEADY_LINK_PROFILE,
      scheduledOutages: [{ atMs: START + 2 * DAY, forMs: 3 * 3_600_000 }],
    });
    link.start();
    clock.runSync({ until: START + 2 * DAY + 1 });
    expect(link.cause).toBe("outage");
    clock.runSync({ until: START + 2 * DAY + 3 * 3_600_000 });
    expect(link.up).toBe(true);
    link.stop();
  });

  it("with the default profile: signal stays in 0–30 near its mean, random faults come and go, and a seed replays them", () => {
    const run = (seed: string) => {
      const clock = new VirtualClock({ startMs: START });
      const { link, changes } = linkOn(clock, seed);
      link.start();
      const signals: number[] = [];
      for (let t = START; t < START + 30 * DAY; t += 5 * MIN) {
        clock.runSync({ until: t });
        signals.push(link.signal);
      }
      link.stop();
      return { signals, changes };
    };
    const a = run("walk");
    expect(run("walk")).toEqual(a);
    expect(run("other").signals).not.toEqual(a.signals);
    expect(Math.min(...a.signals)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...a.signals)).toBeLessThanOrEqual(30);
    expect(new Set(a.signals).size).toBeGreaterThan(5);
    expect(a.changes.every((c) => Number.isInteger(c.at))).toBe(true);
    const mean = a.signals.reduce((s, x) => s + x, 0) / a.signals.length;
    expect(mean).toBeGreaterThan(15);
    expect(mean).toBeLessThan(20);
    // 0.5 outages and 1 coverage hole a day: over 30 days, some of each.
    const downs = a.changes.filter((c) => !c.up && c.cause !== "stopped");
    expect(downs.some((c) => c.cause === "outage")).toBe(true);
    expect(downs.some((c) => c.cause === "coverage-hole")).toBe(true);
    expect(downs.length).toBeGreaterThan(20);
    expect(downs.length).toBeLessThan(80);
  });

  it("the walk is the same whenever it is read, and goes down and up at its own sample instants", () => {
    // A weak signal (mean 1) reaches 0 now and then: the link goes down (no-signal) and back.
    const weak = { ...STEADY_LINK_PROFILE, meanSignal: 1, signalStep: 2 };
    const run = (readEveryMs: number) => {
      const clock = new VirtualClock({ startMs: START });
      const { link, changes } = linkOn(clock, "weak", weak);
      link.start();
      const signals = new Map<number, number>();
      for (let t = START; t <= START + 3 * DAY; t += readEveryMs) {
        clock.runSync({ until: t });
        signals.set(t - START, link.signal);
      }
      clock.runSync({ until: START + 3 * DAY });
      link.stop();
      return { signals, changes };
    };
    const often = run(MIN);
    const seldom = run(35 * MIN);
    // Reading it never moves it: at the instants both read, both saw the same signal.
    for (const [t, signal] of seldom.signals) expect(often.signals.get(t), `at ${t}`).toBe(signal);
    expect(seldom.changes).toEqual(often.changes);
    const flips = often.changes.filter((c) => c.cause !== "stopped").slice(1);
    expect(flips.length).toBeGreaterThan(4);
    for (const c of flips) {
      // Each on a sample instant (every 5 minutes from the start), as the signal then read.
      expect((c.at - START) % (5 * MIN)).toBe(0);
      expect(c.cause).toBe(c.up ? "up" : "no-signal");
      expect(c.signal === 0).toBe(!c.up);
    }
  });

  it("a month of a running link costs the clock an event a day or so, not one per sample", () => {
    const clock = new VirtualClock({ startMs: START });
    const { link } = linkOn(clock, "quiet", STEADY_LINK_PROFILE);
    link.start();
    const events = clock.runSync({ until: START + 30 * DAY });
    // 8,640 samples of 5 minutes.
    expect(events).toBeLessThanOrEqual(31);
    expect(link.signal).toBe(18);
    link.stop();
    expect(clock.pending).toBe(0);
  });

  it("transfer time grows with size: latency plus size over bandwidth", () => {
    const clock = new VirtualClock({ startMs: START });
    const link = new CellularLink({
      clock,
      rng: new Rng("t"),
      profile: { latencyMs: 100, latencyJitterMs: 0, bandwidthBytesPerSec: 1000 },
    });
    expect(link.transferMs(0)).toBe(100);
    expect(link.transferMs(2000)).toBe(2100);
  });

  it("its random outages and coverage holes do not depend on how many messages it sent", () => {
    // The drainer batches what is queued when a PUBACK comes back, which on a virtual clock
    // depends on real I/O: a transfer's latency drawn from the episodes' stream moved every
    // later outage, so one seed replayed (rpmlab device --seed) lost different readings.
    const outages = (transfers: number) => {
      const clock = new VirtualClock({ startMs: START });
      const { link, changes } = linkOn(clock, "replay", { outagesPerDay: 4 });
      link.start();
      for (let i = 0; i < transfers; i++) link.transferMs(200);
      clock.runSync({ until: START + 3 * DAY });
      link.stop();
      return changes.filter((c) => c.cause !== "stopped").map((c) => [c.at, c.up, c.cause]);
    };
    const once = outages(1);
    expect(once.length).toBeGreaterThan(2);
    expect(outages(3)).toEqual(once);
  });

  it("rejects a profile value out of range, naming it", () => {
    const clock = new VirtualClock({ startMs: START });
    const bad = (profile: object) => () => new CellularLink({ clock, rng: new Rng(1), profile });
    for (const [profile, field] of [
      [{ meanSignal: 31 }, "meanSignal"],
      [{ bandwidthBytesPerSec: 0 }, "bandwidthBytesPerSec"],
      [{ outagesPerDay: -1 }, "outagesPerDay"],
    ] as const) {
      try {
        bad(profile)();
        expect.unreachable();
      } catch (error) {
        expect(isRpmlabError(error, "E_CONFIG_INVALID")).toBe(true);
        expect((error as Error).message).toContain(field);
      }
    }
    const link = new CellularLink({ clock, rng: new Rng(1) });
    expect(() => link.outage(0)).toThrow(/positive/);
  });
});
