import { describe, expect, it, vi } from "vitest";
import { WholeMillisecondClock } from "../../src/core/clock.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";

const START = Date.UTC(2026, 0, 1);

describe("VirtualClock", () => {
  it("runs events in time order, and equal times in scheduling order", () => {
    const clock = new VirtualClock({ startMs: START });
    const log: string[] = [];
    clock.schedule(START + 30, () => log.push("c@30"));
    clock.schedule(START + 10, () => log.push("a@10"));
    clock.schedule(START + 10, () => log.push("b@10"));
    clock.setTimeout(() => log.push("d@0"), 0);
    expect(clock.runSync()).toBe(4);
    expect(log).toEqual(["d@0", "a@10", "b@10", "c@30"]);
    expect(clock.now()).toBe(START + 30);
  });

  it("gives now() the event's time while it runs, and schedules relative to it", () => {
    const clock = new VirtualClock({ startMs: START });
    const seen: number[] = [];
    clock.setTimeout(() => {
      seen.push(clock.now());
      clock.setTimeout(() => seen.push(clock.now()), 500);
    }, 1_000);
    clock.runSync();
    expect(seen).toEqual([START + 1_000, START + 1_500]);
  });

  it("stops at `until`, leaves later events pending and sets the time to `until`", () => {
    const clock = new VirtualClock({ startMs: START });
    const log: number[] = [];
    for (const t of [100, 200, 300]) clock.schedule(START + t, () => log.push(t));
    expect(clock.runSync({ until: START + 200 })).toBe(2);
    expect(log).toEqual([100, 200]);
    expect(clock.now()).toBe(START + 200);
    expect(clock.pending).toBe(1);
    clock.runSync({ until: START + 250 });
    expect(clock.now()).toBe(START + 250);
  });

  it("never runs a cleared timer", () => {
    const clock = new VirtualClock({ startMs: START });
    const log: string[] = [];
    const handle = clock.setTimeout(() => log.push("cleared"), 10);
    clock.setTimeout(() => log.push("kept"), 20);
    clock.clearTimeout(handle);
    expect(clock.pending).toBe(1);
    clock.runSync();
    expect(log).toEqual(["kept"]);
  });

  it("schedules an instant in the past at the current time, never moving time backwards", () => {
    const clock = new VirtualClock({ startMs: START + 1_000 });
    let at = 0;
    clock.schedule(START, () => {
      at = clock.now();
    });
    clock.runSync();
    expect(at).toBe(START + 1_000);
  });

  it("lets awaiting code continue before time moves on (run)", async () => {
    const clock = new VirtualClock({ startMs: START });
    const log: string[] = [];
    const worker = async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(60_000);
        log.push(`tick ${i} at +${(clock.now() - START) / 60_000}m`);
      }
    };
    clock.schedule(START + 90_000, () => log.push("other at +1.5m"));
    const done = worker();
    await clock.run();
    await done;
    expect(log).toEqual(["tick 0 at +1m", "other at +1.5m", "tick 1 at +2m", "tick 2 at +3m"]);
  });

  it("with `held`, lets work an event started end before the next event, however long it takes", async () => {
    // Work that takes several turns of the event loop (I/O, a chain of immediates), started
    // by an event; a later event reads the time at which it ended.
    const slowWork = (clock: VirtualClock, endedAt: number[]) => async () => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      endedAt.push(clock.now() - START);
    };
    const run = async (hold: boolean) => {
      const clock = new VirtualClock({ startMs: START });
      const endedAt: number[] = [];
      let pending: Promise<void> | undefined;
      clock.schedule(START + 1_000, () => {
        pending = slowWork(clock, endedAt)().finally(() => {
          pending = undefined;
        });
      });
      for (let t = 2_000; t <= 10_000; t += 1_000) clock.schedule(START + t, () => {});
      await clock.run(hold ? { held: () => pending } : {});
      return endedAt;
    };
    expect(await run(true)).toEqual([1_000]);
    // Without it, the clock moved on while the work waited on the event loop.
    expect((await run(false))[0]).toBeGreaterThan(1_000);
  });

  it("replays a month of hourly events identically on two clocks", () => {
    const trace = () => {
      const clock = new VirtualClock({ startMs: START });
      const out: number[] = [];
      const hourly = (n: number) => {
        out.push(clock.now());
        if (n > 0) clock.setTimeout(() => hourly(n - 1), 3_600_000);
      };
      hourly(30 * 24);
      clock.runSync();
      return out;
    };
    const a = trace();
    expect(a).toHaveLength(30 * 24 + 1);
    expect(a).toEqual(trace());
  });

  it("paces events against real time with a finite speed factor", async () => {
    const clock = new VirtualClock({ startMs: START, speed: 1_000_000 });
    const log: number[] = [];
    clock.schedule(START + 60_000, () => log.push(clock.now()));
    await clock.run();
    expect(log).toEqual([START + 60_000]);
  });

  it("with a finite speed, takes the wall time of a span with no event in it (rpmlab demo's pace)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "setImmediate"] });
    try {
      // 60: a virtual minute per wall second, whether or not anything is scheduled in it.
      const clock = new VirtualClock({ startMs: START, speed: 60 });
      let done = false;
      const run = clock.run({ until: START + 60_000 }).then(() => {
        done = true;
      });
      await vi.advanceTimersByTimeAsync(999);
      expect(done).toBe(false);
      expect(clock.now()).toBe(START);
      // An event scheduled meanwhile, inside the span, still runs at its time.
      const log: number[] = [];
      clock.schedule(START + 59_990, () => log.push(clock.now()));
      await vi.runAllTimersAsync();
      await run;
      expect(log).toEqual([START + 59_990]);
      expect(clock.now()).toBe(START + 60_000);
    } finally {
      vi.useRealTimers();
    }
  });

  it("at a speed whose virtual ms is longer than a timer can wait (24.9 days), still waits it", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate"] });
    try {
      // 10⁻¹⁰: a virtual ms is 10¹⁰ wall ms, over a timer's 2³¹−1; Node ran it after 1 ms.
      const clock = new VirtualClock({ startMs: START, speed: 1e-10 });
      let done = false;
      const run = clock.run({ until: START + 1 }).then(() => {
        done = true;
      });
      await vi.advanceTimersByTimeAsync(2 ** 31);
      expect(done).toBe(false);
      expect(clock.now()).toBe(START);
      await vi.advanceTimersByTimeAsync(1e10 - 2 ** 31);
      await run;
      expect(clock.now()).toBe(START + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("ends a paced wait when its signal aborts, time where it was (Ctrl-C in rpmlab demo)", async () => {
    const clock = new VirtualClock({ startMs: START, speed: 1e-6 });
    const stop = new AbortController();
    const run = clock.run({ until: START + 1, signal: stop.signal });
    stop.abort();
    await run;
    expect(clock.now()).toBe(START);
  });

  it("rejects a non-positive speed with an error naming the field", () => {
    expect.assertions(2);
    try {
      new VirtualClock({ startMs: START, speed: 0 });
    } catch (error) {
      expect(isRpmlabError(error, "E_CONFIG_INVALID")).toBe(true);
      expect((error as { details: { field: string } }).details.field).toBe("speed");
    }
  });

  it("takes a new speed, refusing a non-positive one as the constructor does", () => {
    const clock = new VirtualClock({ startMs: START, speed: 60 });
    clock.setSpeed(Number.POSITIVE_INFINITY);
    expect(clock.speed).toBe(Number.POSITIVE_INFINITY);
    expect(() => clock.setSpeed(-1)).toThrow(/clock speed must be > 0, got -1/);
    expect(clock.speed).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("WholeMillisecondClock", () => {
  it("reads a virtual instant between milliseconds floored, and keeps the timers' exact times", async () => {
    const clock = new VirtualClock({ startMs: START });
    const whole = new WholeMillisecondClock(clock);
    const seen: number[] = [];
    // BLE timing: a connection event 1.25 ms on.
    whole.setTimeout(() => seen.push(clock.now(), whole.now()), 1.25);
    const slept = whole.sleep(2.5).then(() => seen.push(clock.now()));
    await clock.run();
    await slept;
    expect(seen).toEqual([START + 1.25, START + 1, START + 2.5]);
  });
});
