/**
 * Ingestion benchmark (issue 3): readings per second from MQTT into a committed SQLite store,
 * beside the raw pub→sub throughput of the same embedded broker in the same run, with the same
 * messages (QoS 1, persistent sessions). Target: ingest ≥ 60 % of raw. Prints figures only.
 *
 *   node --import tsx test/bench/ingest.ts [--messages N] [--per-message N] [--store SPEC]
 *     [--max-batch N] [--publishers N] [--window N]
 *
 * Publishers: MQTT connections, each publishing the messages of its share of the devices with
 * `window` publications in flight. The default, `--publishers 0`, gives every gateway and IMEI
 * its own connection with 16 in flight, as in the field: the broker's ACL lets a gateway publish
 * only under its own topics, so one connection per gateway is what the lab serves. A few
 * connections each pipelining hundreds of messages for many gateways (`--publishers 8 --window
 * 500`) are no gateway's traffic: through the embedded broker's tap a publisher's PUBACK waits for
 * the commit (src/ingest/sources/broker-tap.ts), so each such connection has one batch in flight.
 *
 * Traffic: every device type of the catalogue, many devices each (their own gateway or IMEI,
 * activated for a patient), readings from generateReadings encoded with the shared codecs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import type { MqttClient } from "mqtt";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { Profile } from "../../src/catalogue/schema.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { Ingestor } from "../../src/ingest/ingestor.ts";
import { BrokerTap } from "../../src/ingest/sources/broker-tap.ts";
import { workerStoreOf } from "../../src/ingest/worker-processor.ts";
import { createBroker } from "../../src/mqtt/broker.ts";
import { connectClient, subscribeAll } from "../../src/mqtt/client.ts";
import { encodePayload } from "../../src/mqtt/payload.ts";
import { ingestFilters, topicOf } from "../../src/mqtt/topics.ts";
import { cellularUplink, gatewayUplink } from "../../src/mqtt/uplink.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { openStore } from "../../src/store/open.ts";
import { cpuPerUnit, threadCpu } from "./_thread-cpu.ts";

const { values: args } = parseArgs({
  options: {
    messages: { type: "string", default: "40000" },
    "per-message": { type: "string", default: "1" },
    store: { type: "string" },
    "max-batch": { type: "string" },
    publishers: { type: "string", default: "0" },
    window: { type: "string", default: "16" },
  },
});
const MESSAGES = Number(args.messages);
const PER_MESSAGE = Number(args["per-message"]);
const given = args.store;
/** Messages per transaction at most; the Ingestor's default unless given. */
const MAX_BATCH = args["max-batch"] === undefined ? undefined : Number(args["max-batch"]);
const DEVICES_PER_TYPE = 40;
/** Publications in flight per publisher (MQTT.js and aedes set no limit of their own). */
const WINDOW = Number(args.window);
const T0 = 1_767_225_600_000;

const catalogue = Catalogue.load();
const patients = PatientModels.load();

interface Device {
  readonly profile: Profile;
  readonly hardwareUuid: string;
  readonly address: string;
  readonly sensorId: string | null;
}

const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, "0");
const devices: Device[] = catalogue.profiles.flatMap((profile, p) =>
  Array.from({ length: DEVICES_PER_TYPE }, (_, d) => {
    const n = p * 1000 + d;
    return {
      profile,
      hardwareUuid:
        profile.connectivity === "cellular"
          ? `35693803${String(n).padStart(7, "0")}`
          : `BE${hex(n, 10)}`,
      address: `F0${hex(n, 10)}`,
      sensorId: profile.sensor_id.required ? `SN${hex(n, 6)}` : null,
    };
  }),
);

/** Messages round-robin over the devices, each device's readings in its own order. */
interface Message {
  readonly topic: string;
  readonly payload: Buffer;
  readonly readings: number;
  /** Index of the device (gateway or IMEI) that sends it. */
  readonly sender: number;
}

function buildMessages(): Message[] {
  const streams = devices.map((device, i) => {
    const readings = generateReadings({
      devices: [device.profile],
      patient: patients.models[i % patients.models.length]!,
      rng: new Rng(`bench-ingest/${i}`),
      start: T0,
      days: 120,
      duplicateRate: 0,
      ...(device.sensorId === null
        ? {}
        : { settings: { [device.profile.name]: { serialNumber: device.sensorId } } }),
    });
    return { device, index: i, readings, next: 0, sequence: 0 };
  });
  const out: Message[] = [];
  let live = streams.filter((s) => s.readings.length > 0);
  while (out.length < MESSAGES && live.length > 0) {
    for (const s of live) {
      if (out.length >= MESSAGES) break;
      const batch = s.readings.slice(s.next, s.next + PER_MESSAGE);
      s.next += batch.length;
      const { device } = s;
      const mapping = mappingFor(device.profile);
      const encoded = batch.map((r) => ({
        receivedAt: r.timestamp + 30_000,
        sequence: s.sequence++ & 0xffff,
        values: mapping.encode(r, device.profile, (s.sequence * 8) & 0xffff),
      }));
      const messageId = `${device.hardwareUuid}-${s.next}`;
      const sentAt = batch[0]!.timestamp + 60_000;
      const { topic, payload } =
        device.profile.connectivity === "cellular"
          ? {
              topic: topicOf("cell/up", device.hardwareUuid),
              payload: encodePayload(
                "cell/up",
                cellularUplink({
                  messageId,
                  imei: device.hardwareUuid,
                  deviceType: device.profile.name,
                  sentAt,
                  readings: encoded,
                }),
              ),
            }
          : {
              topic: topicOf("gw/up", device.hardwareUuid),
              payload: encodePayload(
                "gw/up",
                gatewayUplink({
                  messageId,
                  gatewayUuid: device.hardwareUuid,
                  sentAt,
                  readings: encoded.map((e) => ({
                    ...e,
                    deviceAddress: device.address,
                    sensorCode: device.profile.sensor_code!,
                    sensorId: device.sensorId,
                  })),
                }),
              ),
            };
      out.push({ topic, payload, readings: batch.length, sender: s.index });
    }
    live = live.filter((s) => s.next < s.readings.length);
  }
  return out;
}

/**
 * Publishes every message at QoS 1, each from the publisher of its device, with a window in
 * flight per publisher; a device's messages go out in their order.
 */
async function publishAll(
  publishers: readonly MqttClient[],
  messages: readonly Message[],
): Promise<void> {
  await Promise.all(
    publishers.map(async (client, p) => {
      const mine = messages.filter((m) => m.sender % publishers.length === p);
      let next = 0;
      const lane = async () => {
        while (next < mine.length) {
          const m = mine[next++]!;
          await client.publishAsync(m.topic, m.payload, { qos: 1 });
        }
      };
      await Promise.all(Array.from({ length: WINDOW }, lane));
    }),
  );
}

/** Resolves once `count()` reaches `n` (checked as events arrive). */
function reach(subscribe: (tick: () => void) => void, count: () => number, n: number) {
  return new Promise<void>((resolve) => {
    subscribe(() => {
      if (count() >= n) resolve();
    });
  });
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

const messages = buildMessages();
const totalReadings = messages.reduce((s, m) => s + m.readings, 0);
const meanBytes = messages.reduce((s, m) => s + m.payload.length, 0) / messages.length;
const broker = createBroker("embedded:0");
await broker.start();
const PUBLISHERS = Number(args.publishers) || devices.length;
const publishers: MqttClient[] = [];
for (let p = 0; p < PUBLISHERS; p++) {
  publishers.push(await connectClient(broker.url, { clientId: `bench-pub-${p}`, clean: true }));
}

// 1. Raw: a subscriber that acknowledges each message as it arrives.
let received = 0;
let rawFinished = () => {};
const rawDone = new Promise<void>((resolve) => {
  rawFinished = resolve;
});
const raw = await connectClient(broker.url, {
  clientId: "bench-raw",
  handleMessage: (_packet, done) => {
    if (++received === messages.length) rawFinished();
    done();
  },
});
await subscribeAll(raw, ingestFilters(null));
let started = performance.now();
let cpuBefore = threadCpu();
await publishAll(publishers, messages);
await rawDone;
const rawSeconds = (performance.now() - started) / 1000;
const rawCpu = cpuPerUnit(cpuBefore, threadCpu(), messages.length);
await raw.unsubscribeAsync(ingestFilters(null));
await raw.endAsync();

// 2. Ingest into a committed SQLite store (a temp file unless a spec is given).
const dir = given === undefined ? mkdtempSync(join(tmpdir(), "rpmlab-bench-ingest-")) : "";
const spec = given ?? `sqlite:${join(dir, "ingest.db")}`;
const clock = new VirtualClock({ startMs: T0 + 200 * 86_400_000 });
const store = await openStore(spec, { clock, rng: new Rng("bench-ingest") });
const account = await store.accounts.create({ clientDomain: "bench", environment: "production" });
for (const [i, device] of devices.entries()) {
  const patient = await store.patients.create(account.id, { externalId: `P-${i}` });
  await store.devices.create(account.id, {
    name: device.profile.name,
    sensorCode: device.profile.sensor_code,
    hardwareUuid: device.hardwareUuid,
    sensorId: device.sensorId,
    patientId: patient.id,
    status: "Delivered",
  });
}
// As `rpmlab serve` ingests from its embedded broker: through the broker's tap.
const ingestor = new Ingestor({
  source: BrokerTap.of(broker)!,
  ...(MAX_BATCH === undefined ? {} : { maxBatch: MAX_BATCH }),
  store,
  catalogue,
  clock,
  // As `rpmlab serve` does: batches commit in a worker thread on a SQLite file.
  workerStore: workerStoreOf(spec),
});
let committed = 0;
let rows = 0;
let batches = 0;
let dead = 0;
await ingestor.start();
started = performance.now();
const ingestDone = reach(
  (tick) =>
    ingestor.events.on("batch", (b) => {
      committed += b.outcomes.length;
      rows += b.stored.length;
      dead += b.deadLetters.length;
      batches++;
      tick();
    }),
  () => committed,
  messages.length,
);
cpuBefore = threadCpu();
await publishAll(publishers, messages);
await ingestDone;
const ingestSeconds = (performance.now() - started) / 1000;
const ingestCpu = cpuPerUnit(cpuBefore, threadCpu(), messages.length);
await ingestor.stop();
for (const p of publishers) await p.endAsync();
await broker.stop();
await store.close();
if (dir !== "") rmSync(dir, { recursive: true, force: true });

const rawRate = totalReadings / rawSeconds;
const ingestRate = totalReadings / ingestSeconds;
console.log(
  `ingest benchmark: ${fmt(messages.length)} messages × ${PER_MESSAGE} reading(s) (${fmt(totalReadings)} readings, mean ${fmt(meanBytes)} B), ${devices.length} devices of ${catalogue.profiles.length} types, ${PUBLISHERS} publishers`,
);
console.log(
  `  raw pub→sub (embedded aedes, QoS 1):   ${fmt(messages.length / rawSeconds)} messages/s = ${fmt(rawRate)} readings/s`,
);
console.log(
  `  ingest → ${given === undefined ? "SQLite file (WAL)" : spec}: ${fmt(messages.length / ingestSeconds)} messages/s = ${fmt(ingestRate)} readings/s, ${fmt(rows / ingestSeconds)} rows/s`,
);
console.log(
  `  ${fmt(rows)} rows committed in ${fmt(batches)} batches (mean ${fmt(committed / batches)} messages), ${dead} dead letters`,
);
for (const [phase, c] of [
  ["raw", rawCpu],
  ["ingest", ingestCpu],
] as const) {
  if (c === undefined) continue;
  console.log(
    `  CPU per message, ${phase}: main thread ${c.main.toFixed(0)} µs, other threads (ingestion worker, GC helpers) ${c.others.toFixed(0)} µs`,
  );
}
console.log(
  `  ingest / raw: ${((100 * ingestRate) / rawRate).toFixed(0)} % (target ≥ 60 %: ${ingestRate >= 0.6 * rawRate ? "met" : "NOT met"})`,
);
