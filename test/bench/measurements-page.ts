/**
 * Measurement page benchmark: 1,000,000 measurements in a temp SQLite store, then requests/s and
 * latency of `GET hwi-devices/{id}/measurements/?page=N&page_size=100` (Api-Key auth included)
 * through the real rpmlab app listening on 127.0.0.1, beside a minimal Fastify + better-sqlite3
 * handler answering the same request with the same body (_naive-measurements.ts: same auth
 * checks, same device check, the same count SQL, the page SQL reading every column and paging
 * by OFFSET, JSON.stringify). Prints figures only.
 *
 *   node --import tsx test/bench/measurements-page.ts [rows] [concurrency] [devices] [rounds]
 *
 * Two access patterns, each run `rounds` times per server, servers alternating:
 * - random pages: every even page of every device once, shuffled: no page follows its
 *   predecessor, so what a page costs by its number alone;
 * - walks: half the devices read from page 1 to the last, each by one client following `next`
 *   (spec 8 rule 1), as a backfill does.
 * The load runs in a child process (_http-load.ts) with a fixed concurrency over keep-alive
 * connections, against 127.0.0.1 only. Besides req/s and latency, each run reports the CPU
 * time the servers' process spent per request: on a machine busy with other work req/s
 * follows the share of the cores the servers get, CPU time per request much less.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/app.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";
import { formatLoad, type LoadResult, load } from "./_http-load.ts";
import { naiveMeasurementsServer } from "./_naive-measurements.ts";

const ROWS = Number(process.argv[2] ?? 1_000_000);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const DEVICES = Number(process.argv[4] ?? 100);
const ROUNDS = Number(process.argv[5] ?? 2);
const PAGE_SIZE = 100;
const T0 = 1_704_067_200_000; // 2024-01-01
const EVERY = 10 * 60_000;
const METRICS = ["blood_pressure", "pulse", "irregular_heartbeat", "battery_percentage"];
const BPM = "Vendor BPM - Wide Range";

const dir = mkdtempSync(join(tmpdir(), "rpmlab-bench-page-"));
const path = join(dir, "bench.db");
const clock = new VirtualClock({ startMs: T0 + 400 * 86_400_000 });
const store = await openStore(`sqlite:${path}`, { clock, rng: new Rng("bench-page") });
const servers: FastifyInstance[] = [];

try {
  const account = await store.accounts.create({ clientDomain: "bench", environment: "production" });
  const { key } = await store.apiKeys.create(account.id, { name: "bench" });
  const devices: string[] = [];
  for (let d = 0; d < DEVICES; d++) {
    const gateway = d.toString(16).toUpperCase().padStart(12, "0");
    const row = await store.devices.create(account.id, {
      name: BPM,
      sensorCode: "10",
      hardwareUuid: gateway,
      status: "Active",
    });
    devices.push(row.id);
  }
  const started = performance.now();
  insertRows(account.id, devices);
  const perDevice = Math.floor(ROWS / DEVICES);
  const pages = Math.max(1, Math.ceil(perDevice / PAGE_SIZE));
  console.log(
    `setup: ${ROWS.toLocaleString("en")} measurements (${DEVICES} devices × ${perDevice.toLocaleString("en")}, ${pages} pages of ${PAGE_SIZE} each) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const rpmlab = buildApp({ store, clock, config: { adminToken: "bench-admin" } });
  const naive = naiveMeasurementsServer(path);
  servers.push(rpmlab, naive);
  const targets = [
    { name: "rpmlab app", port: await listen(rpmlab) },
    { name: "naive Fastify + better-sqlite3", port: await listen(naive) },
  ];

  const rng = new Rng("bench-page-requests");
  const url = (device: string, page: number, size = PAGE_SIZE) =>
    `/clients/bench/hwi/hwi-devices/${device}/measurements/?page=${page}&page_size=${size}`;
  const random = shuffled(
    rng,
    devices.flatMap((d) => range(2, pages, 2).map((p) => [url(d, p)])),
  );
  const walks = devices
    .slice(0, Math.ceil(DEVICES / 2))
    .map((d) => range(1, pages, 1).map((p) => url(d, p)));
  // Warm-up (JIT, caches) on another page size, so it leaves no cursor for the runs.
  const warmUp = Array.from({ length: 1000 }, () => [
    url(devices[rng.int(0, DEVICES - 1)]!, rng.int(1, 2 * pages), PAGE_SIZE / 2),
  ]);
  await sameBodies(random.slice(0, 20).flat(), targets[0]!.port, targets[1]!.port, key);
  for (const t of targets) await load(t.port, warmUp, key, CONCURRENCY);

  const scenarios = [
    { name: "random pages", sequences: random },
    { name: "walks following next", sequences: walks },
  ];
  const summary: string[] = [];
  for (const scenario of scenarios) {
    const requests = scenario.sequences.flat().length;
    console.log(
      `\n${scenario.name}: ${requests.toLocaleString("en")} requests per round, concurrency ${CONCURRENCY}`,
    );
    const results = new Map<string, LoadResult[]>(targets.map((t) => [t.name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const t of round % 2 === 1 ? targets : [...targets].reverse()) {
        const r = await load(t.port, scenario.sequences, key, CONCURRENCY);
        results.get(t.name)!.push(r);
        console.log(`  round ${round}  ${t.name.padEnd(32)} ${formatLoad(r)}`);
      }
    }
    const [mine, base] = targets.map((t) => median(results.get(t.name)!));
    const cpu = (results: readonly LoadResult[]) => median(results, (r) => -r.cpuMs).cpuMs;
    const [mineCpu, baseCpu] = targets.map((t) => cpu(results.get(t.name)!));
    summary.push(
      `${scenario.name.padEnd(22)} rpmlab ${formatLoad(mine!)}`,
      `${"".padEnd(22)} naive  ${formatLoad(base!)}`,
      `${"".padEnd(22)} rpmlab / naive: ${((mine!.rps / base!.rps) * 100).toFixed(0)} % of the baseline's req/s, ${((baseCpu! / mineCpu!) * 100).toFixed(0)} % of its requests per CPU second (CPU medians ${mineCpu!.toFixed(2)} vs ${baseCpu!.toFixed(2)} ms/req)`,
    );
  }
  console.log(`\nmedians (pages of ${PAGE_SIZE} with count, keep-alive, 127.0.0.1):`);
  for (const line of summary) console.log(line);
} finally {
  for (const s of servers) await s.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

/** The median run by `score` (req/s unless told; the lower middle of an even count). */
function median(
  results: readonly LoadResult[],
  score: (r: LoadResult) => number = (r) => r.rps,
): LoadResult {
  const sorted = [...results].sort((a, b) => score(a) - score(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function range(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i += step) out.push(i);
  return out;
}

/** Fisher-Yates with the seeded Rng. */
function shuffled<T>(rng: Rng, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** Bulk setup straight through better-sqlite3 (one transaction): the store's own rows. */
function insertRows(accountId: string, devices: readonly string[]): void {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const insert = db.prepare(
    `insert into measurements (account_id, device_id, device_name, patient_external_id, source,
      hardware_uuid, sensor_code, sensor_id, metric, value_1, value_2, timestamp, timezone_offset,
      estimated_timestamp, filter_params, measurement_index, device_log_index, dedupe_index,
      message_id, characteristic_uuid, raw, created)
     values (?, ?, ?, ?, ?, ?, ?, null, ?, ?, ?, ?, -5, 0, ?, ?, null, ?, ?, ?, ?, ?)`,
  );
  // What ingestion keeps with each record for audit (DESIGN "Uplink"): the raw characteristic.
  const raw = Buffer.from([0x1e, 0x78, 0, 0x50, 0, 0x5a, 0, 0xe8, 0x07, 1, 1, 0]);
  const characteristic = "00002a35-0000-1000-8000-00805f9b34fb";
  const all = db.transaction(() => {
    for (let n = 0; n < ROWS; n++) {
      const d = n % devices.length;
      const k = Math.floor(n / devices.length);
      const reading = Math.floor(k / METRICS.length);
      const metric = METRICS[k % METRICS.length]!;
      const timestamp = T0 + reading * EVERY;
      insert.run(
        accountId,
        devices[d],
        BPM,
        `P-${d}`,
        `MAC-${d}`,
        d.toString(16).toUpperCase().padStart(12, "0"),
        "10",
        metric,
        metric === "blood_pressure" ? 120 + (n % 40) : 70 + (n % 30),
        metric === "blood_pressure" ? 80 : null,
        timestamp,
        JSON.stringify({ measurement_index: reading + 1 }),
        reading + 1,
        reading + 1,
        `msg-${d}-${reading}`,
        characteristic,
        raw,
        timestamp + 30_000,
      );
    }
  });
  all();
  db.close();
}

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Both servers answer the same bytes (next/previous compared without their origin). */
async function sameBodies(list: string[], a: number, b: number, key: string): Promise<void> {
  const get = async (port: number, p: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${p}`, {
      headers: { authorization: `Api-Key ${key}` },
    });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${port} ${p}: ${res.status} ${body}`);
    return body.replaceAll(`"http://127.0.0.1:${port}/`, '"/');
  };
  for (const p of list) {
    if ((await get(a, p)) !== (await get(b, p))) {
      throw new Error(`the two servers answer ${p} differently`);
    }
  }
}
