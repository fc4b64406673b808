/**
 * Scenario benchmark (issue 7): wall time of scenarios/hypertension-cohort-30d.yaml with its
 * cohort resized, on the direct path, as `rpmlab run` runs it (the lab's composition on a virtual
 * clock, embedded broker, memory store). Prints figures, asserts nothing.
 *
 *   node --import tsx test/bench/scenario-cohort.ts [--patients 1000]
 *
 * Target: 1,000 patients × 30 days in ≤ 60 s. The emulated-BLE figure the issue also asks for
 * (50 patients) is printed as not run: the runner drives the direct path only so far.
 */
import { parseArgs } from "node:util";
import { loadScenario } from "../../src/scenario/load.ts";
import { runScenario } from "../../src/scenario/runner.ts";
import type { Scenario } from "../../src/scenario/types.ts";

const { values } = parseArgs({ options: { patients: { type: "string", default: "1000" } } });
const patients = Number(values.patients);
const base = loadScenario("scenarios/hypertension-cohort-30d.yaml");
const total = base.cohorts.reduce((n, c) => n + c.count, 0);
// Every cohort scaled by the same factor (at least one patient each).
const scenario: Scenario = {
  ...base,
  cohorts: base.cohorts.map((c) => ({
    ...c,
    count: Math.max(1, Math.round((c.count * patients) / total)),
  })),
};
const count = scenario.cohorts.reduce((n, c) => n + c.count, 0);
const days = scenario.durationMs / 86_400_000;
const cpu = process.cpuUsage();
const report = await runScenario(scenario);
const used = process.cpuUsage(cpu);
const wall = report.wall_ms / 1000;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(
  `hypertension-cohort-30d, direct path: ${fmt(count)} patients × ${days} days in ${wall.toFixed(1)} s wall ` +
    `(target ≤ 60 s at 1,000 patients: ${count >= 1000 && wall <= 60 ? "met" : count >= 1000 ? "NOT met" : "not measured at 1,000"})`,
);
console.log(
  `  ${fmt(report.counts.readings.taken)} readings taken, ${fmt(report.counts.readings.stored)} stored, ` +
    `${fmt(report.readings_per_wall_second)} readings per wall second, virtual/wall speed-up ${fmt(report.speedup)}×, ` +
    `CPU ${((used.user + used.system) / 1e6).toFixed(1)} s, RSS ${fmt(process.memoryUsage().rss / 2 ** 20)} MB, expectations ${report.passed ? "held" : "did not all hold"}`,
);
console.log(
  "hypertension-cohort-30d, emulated BLE, 50 patients: not run (the runner drives the direct path only)",
);
