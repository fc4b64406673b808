/**
 * Gateway fleet throughput (issue 6): readings per second from G gateways on the direct path
 * (`--ble direct`) into `rpmlab serve`, beside the ingest rate test/bench/ingest.ts measures in
 * the same run (a child process, first). Target: fleet ≥ 50 % of ingest. Prints figures only.
 *
 *   node --import tsx test/bench/gateway-fleet.ts [--gateways G] [--readings K]
 *     [--ingest-messages N] [--ingest-per-message R] [--step MS]
 *
 * `--ingest-messages 0` skips the reference. The reference publishes R readings per message (1 by
 * default, ingest.ts's own default); the fleet's messages carry what a gateway's outbox holds when
 * its drainer takes a batch (printed as their mean).
 *
 * The lab is serve's composition root (src/app/lab.ts) on a VirtualClock: a SQLite file store
 * with ingestion committing in its worker thread, the embedded broker with the lab's credentials
 * and ACL, ingestion through the broker's tap (a gateway's PUBACK means committed), adoption and
 * whitelist downlinks, the HTTP API. Each gateway is a household: a cuff, a scale and a
 * glucometer, activated through the HWI API on the gateway's uuid, each advertising the MAC its
 * HWI id gives; the lab whitelists them when the gateway first checks in.
 *
 * Untimed set-up: every device takes K readings out of the gateway's reach, so it holds them in
 * its store. Timed: every device comes into reach at once; the gateways visit them (Current Time,
 * RACP), queue the readings and upload them in envelopes of up to 256 while the Clock is stepped
 * (each step waits for the publications in flight); the clock stops when every reading is
 * acknowledged, i.e. committed. Readings/s = readings / wall seconds; the records are then
 * counted in the SQLite file, attributed to devices.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { Lab } from "../../src/app/lab.ts";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { serveConfig } from "../../src/config/serve-config.ts";
import { createLogger } from "../../src/core/logger.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { DirectDevice, DirectRadio } from "../../src/devices/direct-device.ts";
import { deviceMacAddress } from "../../src/fulfilment/identifiers.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { LabApi } from "../support/lab-api.ts";
import { ingestBaseline } from "./_ingest-baseline.ts";

const { values: args } = parseArgs({
  options: {
    gateways: { type: "string", default: "1000" },
    readings: { type: "string", default: "10" },
    "ingest-messages": { type: "string", default: "20000" },
    "ingest-per-message": { type: "string", default: "1" },
    step: { type: "string", default: "1000" },
  },
});
const GATEWAYS = Number(args.gateways);
const READINGS = Number(args.readings);
const INGEST_MESSAGES = Number(args["ingest-messages"]);
const INGEST_PER_MESSAGE = Number(args["ingest-per-message"]);
/** Virtual ms the Clock moves per step of the timed phase (a transfer takes 50–250 ms). */
const STEP_MS = Number(args.step);
/** HTTP requests in flight while activating (set-up only). */
const LANES = 8;
const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 2, 8, 0, 0);

/** A household: three device types that keep readings taken out of reach (spec 2.8). */
const KIT = [
  { name: "Vendor BPM - Wide Range", patient: "hypertensive" },
  { name: "Vendor Scale", patient: "heart-failure" },
  { name: "Vendor Glucometer", patient: "type2-diabetic" },
] as const;

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const mb = (n: number) => `${fmt(n / 2 ** 20)} MB`;
const log = (line: string) => console.log(`  [${(performance.now() / 1000).toFixed(1)} s] ${line}`);
const catalogue = Catalogue.load();
const patients = PatientModels.load();

/** The first K readings of a profile's patient (the same values on every gateway). */
function readingsOf(entry: (typeof KIT)[number]): GeneratedReading[] {
  const profile = catalogue.get(entry.name);
  for (let days = Math.max(2, READINGS); ; days *= 2) {
    const all = generateReadings({
      devices: [profile],
      patient: patients.get(entry.patient),
      rng: new Rng(`bench-fleet/${entry.name}`),
      start: T0,
      days,
      duplicateRate: 0,
    }).filter((r) => !r.duplicate);
    if (all.length >= READINGS) return all.slice(0, READINGS);
  }
}

/** Runs `task` over `items` with `lanes` in flight. */
async function inLanes<T>(items: readonly T[], lanes: number, task: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

// 1. The reference: the ingest benchmark, alone, before anything of this run is built.
const ingestArgs = [
  "--messages",
  String(INGEST_MESSAGES),
  "--per-message",
  String(INGEST_PER_MESSAGE),
];
let baseline: ReturnType<typeof ingestBaseline> | undefined;
if (INGEST_MESSAGES > 0) {
  log(`ingest baseline: test/bench/ingest.ts ${ingestArgs.join(" ")} …`);
  baseline = ingestBaseline(ingestArgs);
  log(baseline.line);
}

// 2. The lab, as `rpmlab serve --store sqlite:… --port 0` builds it, on a VirtualClock.
const dir = mkdtempSync(join(tmpdir(), "rpmlab-bench-fleet-"));
const dbFile = join(dir, "lab.db");
const clock = new VirtualClock({ startMs: T0 });
const lab = new Lab(
  serveConfig(
    {
      store: `sqlite:${dbFile}`,
      broker: "embedded:0",
      port: "0",
      adminToken: "bench-fleet-admin-token",
    },
    {},
  ),
  createLogger({ level: "silent" }),
  clock,
);
const api = new LabApi(await lab.start());
/** The lab's file, read beside it: whitelist confirmations, then the records stored. */
const db = new Database(dbFile, { readonly: true });

// 3. Households: devices activated on each gateway's uuid through the HWI API, out of reach.
interface Household {
  readonly uuid: string;
  readonly radio: DirectRadio;
  readonly devices: DirectDevice[];
  credentials?: { username: string; password: string };
  gateway?: Gateway;
}
const households: Household[] = Array.from({ length: GATEWAYS }, (_, g) => ({
  uuid: `F0${g.toString(16).toUpperCase().padStart(10, "0")}`,
  radio: new DirectRadio(),
  devices: [],
}));
const pools = KIT.map(readingsOf);
await inLanes(households, LANES, async (h) => {
  for (const [i, entry] of KIT.entries()) {
    const created = await api.hwi<{ id: string }>("POST", "hwi-devices/", {
      device: { name: entry.name, hardware_uuid: h.uuid },
      patient: { external_id: `FLEET-${h.uuid}-${i}` },
    });
    if (created.status !== 201) throw new Error(`activate: ${JSON.stringify(created.body)}`);
    const device = new DirectDevice(
      {
        profile: catalogue.get(entry.name),
        clock,
        serial: `SN${h.uuid.slice(-6)}${i}`,
        address: deviceMacAddress(created.body.id),
      },
      h.radio,
    );
    device.setInRange(false);
    h.devices.push(device);
  }
  h.credentials = await api.credentials("gateway", h.uuid);
});
log(`${fmt(GATEWAYS * KIT.length)} devices activated on ${fmt(GATEWAYS)} gateways`);

// Every device takes its K readings a minute apart, out of reach: it keeps them in its store.
const outcomes: Promise<string>[] = [];
for (const h of households) {
  for (const [i, device] of h.devices.entries()) {
    for (const [k, reading] of pools[i]!.entries()) {
      clock.schedule(T0 + (k + 1) * MIN, () => outcomes.push(device.take(reading)));
    }
  }
}
await clock.run({ until: T0 + (READINGS + 1) * MIN });
const kept = (await Promise.all(outcomes)).filter((o) => o === "stored").length;
const expectedRecords = households.length * pools.flat().reduce((n, r) => n + r.records.length, 0);
log(`${fmt(kept)} readings kept by the devices (${fmt(expectedRecords)} records)`);

// 4. The gateways power on, check in, and are told their whitelist.
await inLanes(households, LANES, async (h) => {
  h.gateway = await Gateway.open({
    clock,
    rng: new Rng(`bench-fleet/${h.uuid}`),
    catalogue,
    gatewayUuid: h.uuid,
    broker: { url: api.info.mqtt_url, ...h.credentials },
    ble: new DirectBle(h.radio),
    link: { profile: STEADY_LINK_PROFILE },
  });
  await h.gateway.start();
});
const gateways = households.map((h) => h.gateway!);
log(`${fmt(gateways.length)} gateways connected`);

/** Lets the network I/O of a Clock step finish: connections, publications and their PUBACKs. */
async function settle(): Promise<void> {
  await Promise.all(
    gateways.map(async (g) => {
      await g.modem.session.settled();
      await g.modem.session.landed();
      await g.modem.drainer.settled();
    }),
  );
}

/** Steps the Clock until `done()`, printing progress; throws past a wall-clock deadline. */
async function pump(what: string, done: () => boolean, progress: () => string): Promise<void> {
  const deadline = performance.now() + 10 * 60_000;
  let shown = performance.now();
  while (!done()) {
    if (performance.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${progress()}`);
    await clock.run({ until: clock.now() + STEP_MS });
    await settle();
    if (performance.now() - shown > 5000) {
      shown = performance.now();
      log(`${what}: ${progress()}`);
    }
  }
}

const held = () => gateways.filter((g) => g.rules.list().length === KIT.length).length;
await pump(
  "whitelists",
  () => held() === gateways.length,
  () => `${fmt(held())} of ${fmt(gateways.length)} gateways hold theirs`,
);
// The gateways' acknowledgements (RE → CO) must be over before the clock starts: otherwise that
// work is timed with the readings.
const confirmed = db.prepare(
  "SELECT count(*) AS n FROM gateway_whitelist WHERE whitelist_status = 'CO'",
);
const entries = () => (confirmed.get() as { n: number }).n;
const checkins = () => gateways.reduce((n, g) => n + g.stats.checkins, 0);
await pump(
  "confirmations",
  () => entries() === gateways.length * KIT.length,
  () => `${fmt(entries())} of ${fmt(gateways.length * KIT.length)} whitelist entries confirmed`,
);
log(`every whitelist entry confirmed (CO), after ${fmt(checkins())} check-ins`);

// 5. Timed: every device comes into reach; stop when every reading is committed.
const acknowledged = () => gateways.reduce((n, g) => n + g.stats.uplink.readings, 0);
const before = acknowledged();
const relayed = () => acknowledged() - before;
global.gc?.();
const cpu0 = process.cpuUsage();
const virtual0 = clock.now();
const t0 = performance.now();
for (const h of households) for (const device of h.devices) device.setInRange(true);
await pump(
  "readings",
  () => relayed() >= kept,
  () => `${fmt(relayed())} of ${fmt(kept)} readings committed`,
);
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const rss = process.memoryUsage().rss;
const virtualSeconds = (clock.now() - virtual0) / 1000;

// The store's side: records attributed to a device (none orphaned), read from the file.
const counted = db
  .prepare("SELECT count(*) AS records, count(device_id) AS attributed FROM measurements")
  .get() as { records: number; attributed: number };
db.close();
const messages = gateways.reduce((n, g) => n + g.stats.uplink.messages, 0);
const sessions = gateways.reduce((n, g) => n + g.stats.sessions, 0);
const failures = gateways.reduce((n, g) => n + g.stats.sessionFailures, 0);

for (const g of gateways) await g.stop();
await lab.stop();
rmSync(dir, { recursive: true, force: true });

const rate = relayed() / wall;
console.log(
  `gateway fleet benchmark: ${fmt(GATEWAYS)} gateways on the direct path, ${fmt(GATEWAYS * KIT.length)} devices (cuff, scale, glucometer) with ${READINGS} stored readings each, into rpmlab serve (embedded broker, SQLite file)`,
);
console.log(
  `  relayed: ${fmt(relayed())} readings in ${fmt(messages)} messages (mean ${fmt(relayed() / messages)} readings), ${fmt(sessions)} visits, ${failures} failed; ${fmt(counted.records)} records stored, ${fmt(counted.attributed)} attributed (expected ${fmt(expectedRecords)})`,
);
console.log(
  `  fleet → SQLite file: ${fmt(rate)} readings/s = ${fmt(messages / wall)} messages/s (${wall.toFixed(1)} s wall, ${virtualSeconds.toFixed(0)} s virtual; CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s, all threads; RSS ${mb(rss)})`,
);
if (baseline !== undefined) {
  const share = (100 * rate) / baseline.readingsPerSecond;
  console.log(
    `  ingest (test/bench/ingest.ts ${ingestArgs.join(" ")}, same run): ${fmt(baseline.readingsPerSecond)} readings/s = ${fmt(baseline.messagesPerSecond)} messages/s`,
  );
  console.log(
    `  fleet / ingest: ${share.toFixed(0)} % (target ≥ 50 %: ${share >= 50 ? "met" : "NOT met"})`,
  );
}
