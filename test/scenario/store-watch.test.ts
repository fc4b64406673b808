import { describe, expect, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import { TypedEvents } from "../../src/core/events.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { BatchResult, IngestEvents } from "../../src/ingest/events.ts";
import { StoreWatch } from "../../src/scenario/run/store-watch.ts";

const COMMITTED: BatchResult = { outcomes: [], stored: [], deadLetters: [], gateways: [] };
const DOWN = new RpmlabError("E_STORE_UNAVAILABLE", "connect ECONNREFUSED 127.0.0.1:5432");

/** A watch on hand-fed ingestion events, its wall time a clock the test moves. */
function watched(limitMs = 30_000) {
  const events = new TypedEvents<IngestEvents>();
  const wall = new VirtualClock({ startMs: 0 });
  const clock = new VirtualClock({ startMs: 0 });
  const watch = new StoreWatch({
    events,
    store: "postgres://rpm:***@db/rpm",
    wall,
    clock,
    limitMs,
  });
  const fail = () => events.emit("store_error", { error: DOWN, retryInMs: 1000 });
  return { events, wall, watch, fail };
}

describe("StoreWatch: when a store failure ends a run", () => {
  it("gives up once every attempt failed for the limit of wall time and at least 3 attempts", () => {
    const { wall, watch, fail } = watched();
    fail();
    wall.runSync({ until: 40_000 });
    // One slow attempt past the limit is not enough.
    expect(() => watch.check()).not.toThrow();
    fail();
    expect(() => watch.check()).not.toThrow();
    fail();
    expect(() => watch.check()).toThrow(
      "ingestion cannot store what the fleet sends: the store (postgres://rpm:***@db/rpm) failed every attempt for 40.0 s of wall time (3 attempts, none committed); last error: E_STORE_UNAVAILABLE: connect ECONNREFUSED 127.0.0.1:5432",
    );
    watch.close();
  });

  it("starts over after a commit: failures apart do not add up", () => {
    const { events, wall, watch, fail } = watched();
    fail();
    fail();
    wall.runSync({ until: 20_000 });
    events.emit("batch", COMMITTED);
    expect(watch.failing).toBeUndefined();
    fail();
    fail();
    fail();
    wall.runSync({ until: 45_000 });
    expect(() => watch.check()).not.toThrow();
    expect(watch.failing?.attempts).toBe(3);
    wall.runSync({ until: 50_000 });
    expect(() => watch.check()).toThrow(/failed every attempt for 30\.0 s .*\(3 attempts/);
    watch.close();
  });

  it("moves the run's clock by ingestion's retry wait while the store fails, until a commit", async () => {
    const events = new TypedEvents<IngestEvents>();
    const clock = new VirtualClock({ startMs: 0 });
    // Its own wall clock: real 200 ms pauses between attempts.
    const watch = new StoreWatch({ events, store: "memory", clock });
    let acknowledged: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => {
      acknowledged = resolve;
    });
    // Ingestion's retry, on the run's clock: this time the commit succeeds and the PUBACK goes.
    clock.schedule(1000, () => {
      events.emit("batch", COMMITTED);
      acknowledged();
    });
    const settling = watch.settle(settled);
    events.emit("store_error", { error: DOWN, retryInMs: 1000 });
    await settling;
    expect(clock.now()).toBe(1000);
    expect(watch.failing).toBeUndefined();
    watch.close();
  });
});
