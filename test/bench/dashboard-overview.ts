/**
 * Dashboard totals benchmark (README "Dashboard"): GET /lab/v1/overview/'s counts on a SQLite
 * file holding one account's many measurement records and webhook deliveries. The page waits 50
 * times as long as an answer took before asking again; this says how long that is. Prints
 * figures, asserts nothing.
 *
 *   node --import tsx test/bench/dashboard-overview.ts [records] [deliveries]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { SystemClock } from "../../src/core/clock.ts";
import { Rng } from "../../src/core/rng.ts";
import { labOverview } from "../../src/dashboard/overview.ts";
import { openStore } from "../../src/store/open.ts";
import type { NewMeasurement } from "../../src/store/types-ingest.ts";

const RECORDS = Number(process.argv[2] ?? 1_000_000);
const DELIVERIES = Number(process.argv[3] ?? 200_000);
const BATCH = 5000;
const T0 = 1_767_225_600_000;
const GATEWAY = "A1B2C3D4E5F6";
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

const dir = mkdtempSync(join(tmpdir(), "rpmlab-bench-overview-"));
const clock = new SystemClock();
const store = await openStore(`sqlite:${join(dir, "lab.db")}`, { clock, rng: new Rng("overview") });
const account = await store.accounts.create({ clientDomain: "big", environment: "production" });
const device = await store.devices.create(account.id, {
  name: "Vendor BPM - Wide Range",
  sensorCode: "10",
  hardwareUuid: GATEWAY,
  status: "Active",
});
const webhook = await store.webhooks.create(account.id, {
  endpoint: "http://127.0.0.1:9/hook",
  event: "MEASUREMENT",
});
const record = (n: number): NewMeasurement => ({
  accountId: account.id,
  deviceId: device.id,
  deviceName: device.name,
  patientExternalId: "P-1",
  source: "F01122334455",
  hardwareUuid: GATEWAY,
  sensorCode: "10",
  sensorId: null,
  metric: "pulse",
  value1: 70,
  value2: null,
  timestamp: T0 + n * 1000,
  timezoneOffset: 0,
  estimatedTimestamp: false,
  filterParams: null,
  measurementIndex: n,
  deviceLogIndex: null,
  messageId: null,
  characteristicUuid: null,
  raw: null,
  created: T0 + n * 1000,
});
for (let n = 0; n < RECORDS; n += BATCH) {
  const count = Math.min(BATCH, RECORDS - n);
  await store.transaction((tx) =>
    tx.measurements.insertMany(Array.from({ length: count }, (_, i) => record(n + i))),
  );
}
for (let n = 0; n < DELIVERIES; n += BATCH) {
  const count = Math.min(BATCH, DELIVERIES - n);
  await store.transaction((tx) =>
    tx.webhookDeliveries.createMany(
      Array.from({ length: count }, () => ({
        accountId: account.id,
        webhookId: webhook.id,
        event: "MEASUREMENT" as const,
        body: "{}",
        retry: true,
      })),
    ),
  );
}

const took: number[] = [];
for (let round = 0; round < 5; round++) {
  const started = performance.now();
  await labOverview(store, clock.now());
  took.push(performance.now() - started);
}
took.sort((a, b) => a - b);
const median = took[Math.floor(took.length / 2)]!;
console.log(
  `dashboard overview: ${fmt(RECORDS)} records and ${fmt(DELIVERIES)} deliveries of one account on a SQLite file`,
);
console.log(
  `  ${took.map((t) => t.toFixed(0)).join(", ")} ms (median ${median.toFixed(0)} ms): the page asks again every ${(Math.max(5000, 50 * median) / 1000).toFixed(1)} s`,
);
await store.close();
clock.dispose();
rmSync(dir, { recursive: true, force: true });
