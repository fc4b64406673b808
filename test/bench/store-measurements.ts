/**
 * Measurement store benchmark: inserts 1,000,000 measurements into a temp SQLite store in
 * batches, then times 100-row page queries by device and by patient. Prints figures only.
 *
 *   node --import tsx test/bench/store-measurements.ts [store-spec|""] [rows] [batch]
 *
 * The optional spec (e.g. postgres://postgres@127.0.0.1:5432/test?schema=bench) benchmarks
 * another store; by default a temp SQLite file, removed afterwards.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";
import type { MeasurementQuery, NewMeasurement } from "../../src/store/types-ingest.ts";

const TOTAL = Number(process.argv[3] ?? 1_000_000);
const BATCH = Number(process.argv[4] ?? 5_000);
const DEVICES = 1_000; // two per patient
const PER_READING = ["blood_pressure", "pulse", "irregular_heartbeat", "battery_percentage"];
const T0 = 1_704_067_200_000; // 2024-01-01
const EVERY = 10 * 60_000;
const QUERIES = 500;

const given = process.argv[2] || undefined;
const dir = given === undefined ? mkdtempSync(join(tmpdir(), "rpmlab-bench-")) : "";
const spec = given ?? `sqlite:${join(dir, "bench.db")}`;
const store = await openStore(spec, {
  clock: new VirtualClock({ startMs: T0 }),
  rng: new Rng("bench"),
});
const rng = new Rng("bench-queries");

try {
  const account = await store.accounts.create({ clientDomain: "bench", environment: "production" });
  const device = (i: number) => `device-${i}`;
  const patient = (i: number) => `P-${Math.floor(i / 2)}`;

  // Record n: device n % DEVICES, physical reading k of that device, metric n / DEVICES % 4.
  const record = (n: number): NewMeasurement => {
    const d = n % DEVICES;
    const perDevice = Math.floor(n / DEVICES);
    const k = Math.floor(perDevice / PER_READING.length);
    const timestamp = T0 + k * EVERY;
    return {
      accountId: account.id,
      deviceId: device(d),
      deviceName: "Vendor BPM - Wide Range",
      patientExternalId: patient(d),
      source: `MAC-${d}`,
      hardwareUuid: `GW${String(d).padStart(10, "0")}`,
      sensorCode: "10",
      sensorId: null,
      metric: PER_READING[perDevice % PER_READING.length]!,
      value1: 120 + (n % 40),
      value2: 80,
      timestamp,
      timezoneOffset: -5,
      estimatedTimestamp: false,
      filterParams: { measurement_index: k + 1 },
      measurementIndex: k + 1,
      deviceLogIndex: null,
      messageId: `msg-${d}-${k}`,
      characteristicUuid: "00002a35-0000-1000-8000-00805f9b34fb",
      raw: Uint8Array.of(0x1e, 0x78, 0, 0x50, 0, 0x5a, 0, 0xe8, 0x07, 1, 1, 0),
      created: timestamp + 30_000,
    };
  };

  const started = performance.now();
  for (let n = 0; n < TOTAL; n += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, TOTAL - n) }, (_, i) => record(n + i));
    await store.measurements.insertMany(batch);
  }
  const seconds = (performance.now() - started) / 1000;
  const perDevice = TOTAL / DEVICES;
  console.log(`store: ${spec}`);
  console.log(
    `insert: ${TOTAL.toLocaleString("en")} rows in batches of ${BATCH} in ${seconds.toFixed(1)} s` +
      ` = ${Math.round(TOTAL / seconds).toLocaleString("en")} rows/s`,
  );
  console.log(
    `        (${DEVICES} devices × ${perDevice} rows, ${DEVICES / 2} patients × ${2 * perDevice})`,
  );

  const time = async (label: string, make: () => MeasurementQuery) => {
    const ms: number[] = [];
    let returned = 0;
    for (let i = 0; i < QUERIES; i++) {
      const q = make();
      const t = performance.now();
      const { rows } = await store.measurements.query(q);
      ms.push(performance.now() - t);
      returned += rows.length;
    }
    ms.sort((a, b) => a - b);
    const at = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!.toFixed(2);
    console.log(
      `${label.padEnd(42)} p50 ${at(0.5).padStart(6)} ms  p99 ${at(0.99).padStart(6)} ms` +
        `  (${QUERIES} queries, ${Math.round(returned / QUERIES)} rows each)`,
    );
  };
  const page = (rows: number) => rng.int(0, Math.floor(rows / 100) - 1) * 100;
  const base = { accountId: account.id, limit: 100 };
  await time("device page of 100, offset, with count", () => ({
    ...base,
    deviceId: device(rng.int(0, DEVICES - 1)),
    offset: page(perDevice),
    count: true,
  }));
  await time("device page of 100, offset, no count", () => ({
    ...base,
    deviceId: device(rng.int(0, DEVICES - 1)),
    offset: page(perDevice),
  }));
  await time("patient page of 100, offset, with count", () => ({
    ...base,
    patientExternalId: patient(rng.int(0, DEVICES - 1)),
    offset: page(2 * perDevice),
    count: true,
  }));
  await time("patient page of 100, metric + time range", () => ({
    ...base,
    patientExternalId: patient(rng.int(0, DEVICES - 1)),
    metric: "pulse",
    timestampGte: T0,
    timestampLt: T0 + 365 * 86_400_000,
  }));
  await time("device page of 100, metric, with count", () => ({
    ...base,
    deviceId: device(rng.int(0, DEVICES - 1)),
    metric: "battery_percentage",
    count: true,
  }));
  await time("patient page of 100, created range, count", () => {
    const from = T0 + rng.int(0, Math.floor(perDevice / 8)) * EVERY;
    return {
      ...base,
      patientExternalId: patient(rng.int(0, DEVICES - 1)),
      createdGte: from,
      createdLt: from + 30 * 86_400_000,
      count: true,
    };
  });
  await time("patient page of 100, keyset (after)", () => ({
    ...base,
    patientExternalId: patient(rng.int(0, DEVICES - 1)),
    after: { timestamp: T0 + rng.int(0, Math.floor(perDevice / 8)) * EVERY, id: 0 },
  }));
} finally {
  await store.close();
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
}
