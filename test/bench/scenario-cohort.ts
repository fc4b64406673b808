/**
 * Scenario benchmark (issue 7): wall time of scenarios/hypertension-cohort-30d.yaml with its
 * cohort resized, as `rpmlab run` runs it (the lab's composition on a virtual clock, embedded
 * broker, memory store), on the direct path (default) or on emulated BLE (in-process bleno
 * devices and noble gateways on one emulated radio). Prints figures, asserts nothing.
 *
 *   npm run bench -- scenario-cohort [--patients 1000] [--ble direct|emulated] [--btsnoop FILE]
 *
 * (run.ts starts it with bin/rpmlab's V8 flag; without it, `node --import tsx` on this file
 * measures V8's default young generation, which costs a 1,000-patient run about a fifth more).
 *
 * `--btsnoop FILE` (emulated BLE) captures every controller's HCI traffic as `rpmlab run
 * --btsnoop` does, and prints the capture's size and records; run once without it to see what
 * the capture costs.
 *
 * Targets: 1,000 patients × 30 days in ≤ 60 s on the direct path; the issue asks for the wall
 * time at 50 patients on emulated BLE (no target). On the direct path it also prints the floor
 * the gateways' check-ins set (_broker-floor.ts): the MQTT path alone, times their number.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { CHECKIN_EVERY_MS } from "../../src/gateway/checkin-period.ts";
import { loadScenario } from "../../src/scenario/load.ts";
import { runScenario } from "../../src/scenario/runner.ts";
import type { Scenario } from "../../src/scenario/types.ts";
import { checkinFloorMicros } from "./_broker-floor.ts";

const { values } = parseArgs({
  options: {
    patients: { type: "string" },
    ble: { type: "string", default: "direct" },
    btsnoop: { type: "string" },
  },
});
if (values.ble !== "direct" && values.ble !== "emulated") {
  throw new Error(`--ble takes direct or emulated, got "${values.ble}"`);
}
if (values.btsnoop !== undefined && values.ble !== "emulated") {
  throw new Error("--btsnoop captures HCI traffic: it needs --ble emulated");
}
const ble = values.ble;
const patients = Number(values.patients ?? (ble === "direct" ? 1000 : 50));
const base = loadScenario("scenarios/hypertension-cohort-30d.yaml");
const total = base.cohorts.reduce((n, c) => n + c.count, 0);
// Every cohort scaled by the same factor (at least one patient each).
const scenario: Scenario = {
  ...base,
  transports: { ...base.transports, ble },
  cohorts: base.cohorts.map((c) => ({
    ...c,
    count: Math.max(1, Math.round((c.count * patients) / total)),
  })),
};
const count = scenario.cohorts.reduce((n, c) => n + c.count, 0);
const days = scenario.durationMs / 86_400_000;
const cpu = process.cpuUsage();
const report = await runScenario(
  scenario,
  values.btsnoop === undefined ? {} : { btsnoop: values.btsnoop },
);
const used = process.cpuUsage(cpu);
const wall = report.wall_ms / 1000;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const target =
  ble === "emulated"
    ? "no target"
    : `target ≤ 60 s at 1,000 patients: ${count >= 1000 && wall <= 60 ? "met" : count >= 1000 ? "NOT met" : "not measured at 1,000"}`;
console.log(
  `hypertension-cohort-30d, ${ble === "direct" ? "direct path" : "emulated BLE"}: ${fmt(count)} patients × ${days} days in ${wall.toFixed(1)} s wall (${target})`,
);
console.log(
  `  ${fmt(report.counts.readings.taken)} readings taken, ${fmt(report.counts.readings.stored)} stored, ` +
    `${fmt(report.readings_per_wall_second)} readings per wall second, virtual/wall speed-up ${fmt(report.speedup)}×, ` +
    `CPU ${((used.user + used.system) / 1e6).toFixed(1)} s, RSS ${fmt(process.memoryUsage().rss / 2 ** 20)} MB, expectations ${report.passed ? "held" : "did not all hold"}`,
);
if (values.btsnoop !== undefined) {
  // Records after the 16-octet file header: 24-octet record header, then the payload.
  const capture = readFileSync(values.btsnoop);
  let records = 0;
  for (let at = 16; at < capture.length; at += 24 + capture.readUInt32BE(at + 4)) records++;
  console.log(
    `  btsnoop ${values.btsnoop}: ${fmt(records)} records, ${(capture.length / 2 ** 20).toFixed(1)} MiB, ${fmt(records / wall)} records per wall second`,
  );
}
if (ble === "direct") {
  // Each gateway checks in every period, whatever its patient does: at 1,000 patients and the
  // default 15 minutes, nearly three million check-ins a month, each through the broker.
  const checkins = scenario.cohorts.reduce(
    (n, c) =>
      c.connectivity === "gateway"
        ? n + c.count * Math.floor(scenario.durationMs / (c.checkinEveryMs ?? CHECKIN_EVERY_MS))
        : n,
    0,
  );
  // Measured with 1,000 gateways checking in together, as the benchmark's cohort does.
  const floor = await checkinFloorMicros(1000);
  console.log(
    `  ${fmt(checkins)} gateway check-ins scheduled; the MQTT path alone (QoS 1 status through the embedded broker into the ingestion session, nothing parsed or stored) costs ${floor.toFixed(0)} µs CPU each here: ${((checkins * floor) / 1e6).toFixed(0)} s of CPU before anything else`,
  );
}
console.log(
  `  load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(", ")} on 2 cores`,
);
