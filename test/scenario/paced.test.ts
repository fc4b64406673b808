import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadScenario } from "../../src/scenario/load.ts";
import { renderJson, renderText } from "../../src/scenario/report.ts";
import { runScenario } from "../../src/scenario/runner.ts";
import type { Scenario } from "../../src/scenario/types.ts";

const FILE = fileURLToPath(new URL("../fixtures/scenarios/undrained.yaml", import.meta.url));

describe("a paced scenario", () => {
  // The drain after the end (two virtual hours for outboxes and retries) runs as fast as the lab
  // goes: at the scenario's own speed a realtime run would go on for two wall hours after it,
  // and this test would time out instead.
  it("runs its span at its speed, then drains at once: a realtime second ends", async () => {
    const loaded = loadScenario(FILE);
    const scenario: Scenario = {
      ...loaded,
      clock: { ...loaded.clock, speed: "realtime" },
      durationMs: 1000,
      events: [],
      expectations: [],
    };
    const report = await runScenario(scenario);
    expect(report.virtual).toEqual({
      start: "2026-01-05T00:00:00.000000Z",
      end: "2026-01-05T00:00:01.000000Z",
    });
    expect(report.passed).toBe(true);
  }, 30_000);

  // `clock.speed: 0.5` (or `rpmlab demo --speed 0.5`): the report's factor is the run's, below 1.
  it("reports a run slower than real time with its speed-up below 1, in JSON and text", async () => {
    const loaded = loadScenario(FILE);
    const report = await runScenario({
      ...loaded,
      clock: { ...loaded.clock, speed: 0.5 },
      durationMs: 500,
      events: [],
      expectations: [],
    });
    // Half a virtual second took at least a wall second, plus the lab's start.
    expect(report.speedup).toBeGreaterThan(0);
    expect(report.speedup).toBeLessThanOrEqual(0.5);
    expect(JSON.parse(renderJson(report)).speedup).toBe(report.speedup);
    expect(renderText(report)).toContain(`speedup ${report.speedup}×`);
  }, 30_000);
});
