/**
 * Webhook benchmark (issue 4 §1). Prints figures, asserts nothing.
 *
 *   npm run bench -- webhooks
 *   node --max-semi-space-size=64 --import tsx test/bench/webhooks.ts [deliveries] [seconds-at-1000-readings/s]
 *
 * Started with plain `node`, it runs on V8's default young generation, not bin/rpmlab's, and
 * says so first (_node-flags.ts).
 *
 * 1. Throughput: measurement webhooks delivered per second by the dispatcher to a local receiver
 *    (a plain node:http server in a worker thread answering 200), from deliveries waiting in a
 *    SQLite file store (outbox entries already written by ingestion), with the default
 *    per-endpoint concurrency — beside autocannon's requests per second against the same receiver,
 *    in the same run, with the same request (the dispatcher's headers and body) and as many
 *    connections. Target ≥ 50 %. The
 *    dispatcher, like the bare HTTP client, is measured once warm: the first `deliveries` are
 *    sent unmeasured (their rate is printed as the cold start), the next as many are measured —
 *    a fresh isolate spends its first tens of thousands of deliveries compiling (V8's background
 *    threads: about 17 µs of CPU per delivery over the first 20,000, 2026-11-28), which a
 *    `serve` that runs for hours pays once. Then the store's part alone (storeFloor), the
 *    ceiling it and the bare HTTP client leave, and the dispatcher once more with its store side
 *    answered from memory (ReadyDeliveries): what everything but the store costs.
 * 2. Latency: readings stored at 1,000 readings per second (ingestion's worker thread committing
 *    to a SQLite file, as in `rpmlab serve`), p50/p99 from the commit to the receiver having the
 *    webhook; once with post_as_array (a webhook per reading), once with one POST per record.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { Profile } from "../../src/catalogue/schema.ts";
import { DEFAULT_WEBHOOK_CONCURRENCY } from "../../src/config/webhook-config.ts";
import { SystemClock } from "../../src/core/clock.ts";
import { Rng } from "../../src/core/rng.ts";
import { toIsoMicros } from "../../src/core/time.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import type { Inbound } from "../../src/ingest/prepare.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import { WorkerProcessor } from "../../src/ingest/worker-processor.ts";
import { encodePayload } from "../../src/mqtt/payload.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { gatewayUplink } from "../../src/mqtt/uplink.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import { webhookRequest } from "../../src/webhooks/attempt.ts";
import type { DispatchStore } from "../../src/webhooks/dispatch-store.ts";
import { dispatchStoreFor } from "../../src/webhooks/dispatch-stores.ts";
import { WebhookDispatcher } from "../../src/webhooks/dispatcher.ts";
import { measurementWebhookRecord } from "../../src/webhooks/payloads/measurement.ts";
import { createWebhookSender } from "../../src/webhooks/sender.ts";
import { missingNodeFlags } from "./_node-flags.ts";
import { ReadyDeliveries, readyDelivery } from "./_ready-deliveries.ts";
import { ReceiverThread } from "./_receiver-thread.ts";

const DELIVERIES = Number(process.argv[2] ?? 20_000);
const LATENCY_SECONDS = Number(process.argv[3] ?? 8);
const READINGS_PER_SECOND = 1000;
const TICK_MS = 10;
const CONCURRENCY = DEFAULT_WEBHOOK_CONCURRENCY;
const T0 = 1_767_225_600_000;
const catalogue = Catalogue.load();
const patients = PatientModels.load();
const PROFILES = [
  "Vendor BPM - Wide Range",
  "Vendor Pulse Ox",
  "Vendor Scale",
  "Vendor Glucometer",
];
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const CORES = availableParallelism();
/** User and system CPU of every thread, µs. */
const cpuMicros = (used: NodeJS.CpuUsage) => used.user + used.system;

// ---------------------------------------------------------------------------------------------
// Devices and their readings, one uplink message per reading.

interface Device {
  readonly profile: Profile;
  readonly gateway: string;
  readonly address: string;
}

const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, "0");

function devicesFor(count: number): Device[] {
  return Array.from({ length: count }, (_, i) => ({
    profile: catalogue.get(PROFILES[i % PROFILES.length]!),
    gateway: `BE${hex(i, 10)}`,
    address: `F0${hex(i, 10)}`,
  }));
}

function messagesOf(device: Device, i: number, days: number): Inbound[] {
  const readings: GeneratedReading[] = generateReadings({
    devices: [device.profile],
    patient: patients.models[i % patients.models.length]!,
    rng: new Rng(`bench-webhooks/${i}`),
    start: T0,
    days,
    duplicateRate: 0,
  });
  const mapping = mappingFor(device.profile);
  return readings.map((r, n) => ({
    topic: topicOf("gw/up", device.gateway),
    payload: encodePayload(
      "gw/up",
      gatewayUplink({
        messageId: `${device.gateway}-${n}`,
        gatewayUuid: device.gateway,
        sentAt: r.timestamp + 60_000,
        readings: [
          {
            deviceAddress: device.address,
            sensorCode: device.profile.sensor_code!,
            receivedAt: r.timestamp + 30_000,
            sequence: n & 0xffff,
            values: mapping.encode(r, device.profile, (n * 8) & 0xffff),
          },
        ],
      }),
    ),
    receivedAt: r.timestamp + 60_000,
  }));
}

/** Messages round-robin over the devices. */
function interleave(streams: Inbound[][], limit: number): Inbound[] {
  const out: Inbound[] = [];
  for (let n = 0; out.length < limit; n++) {
    let any = false;
    for (const s of streams) {
      if (n < s.length && out.length < limit) {
        out.push(s[n]!);
        any = true;
      }
    }
    if (!any) break;
  }
  return out;
}

async function lab(
  spec: string,
  devices: readonly Device[],
  postAsArray: boolean,
  clock: SystemClock,
) {
  const store = await openStore(spec, { clock, rng: new Rng("bench-webhooks") });
  const account = await store.accounts.create({ clientDomain: "bench", environment: "production" });
  for (const [i, device] of devices.entries()) {
    const patient = await store.patients.create(account.id, { externalId: `P-${i}` });
    await store.devices.create(account.id, {
      name: device.profile.name,
      sensorCode: device.profile.sensor_code,
      hardwareUuid: device.gateway,
      patientId: patient.id,
      status: "Active",
    });
  }
  await store.webhooks.create(account.id, {
    endpoint: receiver.url(),
    event: "MEASUREMENT",
    postAsArray,
  });
  return store;
}

/**
 * As `rpmlab serve` composes it: on a SQLite file, the store side runs in a worker thread —
 * started here, before the clock starts, as serve starts it before it takes traffic (the thread
 * loads its modules for about half a second).
 */
async function dispatcherOn(store: Store, storeSpec: string, clock: SystemClock) {
  const rng = new Rng("bench-webhooks");
  const deliveries = dispatchStoreFor({ store, storeSpec, catalogue, rng, clock });
  await deliveries.nextDue();
  return dispatcherWith(deliveries, clock);
}

async function dispatcherWith(deliveries: DispatchStore, clock: SystemClock) {
  const config = { timeoutMs: 10_000, concurrency: CONCURRENCY };
  const sender = createWebhookSender("http", config);
  const rng = new Rng("bench-webhooks");
  const dispatcher = new WebhookDispatcher({ store: deliveries, clock, rng, sender, config });
  const stop = async () => {
    await dispatcher.stop();
    await deliveries.close();
    await sender.close();
  };
  return { dispatcher, stop };
}

/** Deliveries per transaction in the store's floor: about what a dispatcher round records. */
const FLOOR_BATCH = 500;

/**
 * CPU per delivery of the durable part alone, through the store's own repositories in this
 * thread: a delivery created (as outbox expansion makes it), then recorded delivered with its
 * attempt (as a round records it) — no measurement read, no body built, no claim, no HTTP and
 * no thread hop. Whatever the dispatcher does, each delivery costs at least this.
 */
async function storeFloor(store: Store, accountId: string, body: string, count: number) {
  const [webhook] = await store.webhooks.list(accountId);
  const used = process.cpuUsage();
  for (let done = 0; done < count; done += FLOOR_BATCH) {
    const made = await store.transaction((tx) =>
      tx.webhookDeliveries.createMany(
        Array.from({ length: Math.min(FLOOR_BATCH, count - done) }, () => ({
          accountId,
          webhookId: webhook!.id,
          event: "MEASUREMENT" as const,
          body,
          retry: true,
        })),
      ),
    );
    await store.transaction((tx) =>
      tx.webhookDeliveries.record(
        made.map((d) => ({
          deliveryId: d.id,
          state: "delivered" as const,
          nextAttemptAt: null,
          attempt: {
            at: clock.now(),
            endpoint: webhook!.endpoint,
            statusCode: 200,
            error: null,
            latencyMs: 1,
            responseSnippet: "ok",
            manual: false,
          },
        })),
      ),
    );
  }
  return cpuMicros(process.cpuUsage(used)) / count;
}

const flagsNote = missingNodeFlags();
if (flagsNote !== undefined) console.log(flagsNote);
const receiver = new ReceiverThread();
await receiver.start();
const dir = mkdtempSync(join(tmpdir(), "rpmlab-bench-webhooks-"));
const clock = new SystemClock();

// 1. Throughput ---------------------------------------------------------------------------------
{
  // About 530 records a device over 120 days: twice DELIVERIES, the warm-up and the measure.
  const devices = devicesFor(Math.max(80, Math.ceil((2 * DELIVERIES) / 500)));
  const streams = devices.map((d, i) => messagesOf(d, i, 120));
  const spec = `sqlite:${join(dir, "throughput.db")}`;
  const store = await lab(spec, devices, false, clock);
  const processor = new MessageProcessor({ store, catalogue });
  // What ingestion leaves: measurements and their outbox entries, committed in batches.
  const all = interleave(streams, Number.MAX_SAFE_INTEGER);
  let stored = 0;
  for (let i = 0; i < all.length && stored < 2 * DELIVERIES; i += 200) {
    const result = await processor.process(all.slice(i, i + 200));
    stored += result.stored.length;
  }
  // Sent first, unmeasured (the cold start); the rest is measured.
  const warmUp = Math.floor(stored / 2);
  const measured = stored - warmUp;
  const sample = JSON.stringify(measurementWebhookRecord((await store.measurements.get(1))!));
  const account = (await store.accounts.getByClientDomain("bench"))!;
  const [webhook] = await store.webhooks.list(account.id);
  // The dispatcher's POST of a delivery, headers and all (its user agent, delivery id, event
  // and attempt number): autocannon and the sender alone send these same bytes, so the receiver
  // does the same work for every client compared.
  const id = new Rng("bench-webhooks/sample").uuidV7(T0);
  const posted = webhookRequest(readyDelivery(webhook!, sample, id, 1, T0, T0), webhook!, 1, T0);

  // autocannon against the same receiver: the same request, as many connections.
  await receiver.reset(false);
  const cannonCpu = process.cpuUsage();
  const cannon = await autocannon({
    url: receiver.url(),
    method: "POST",
    headers: posted.headers,
    body: posted.body,
    connections: CONCURRENCY,
    duration: 5,
  });
  const cannonCpuPer = cpuMicros(process.cpuUsage(cannonCpu)) / cannon.requests.total;
  const cannonRate = cannon.requests.total / (cannon.duration || 5);

  // The HTTP client alone (the dispatcher's sender, no store): once to warm it up (its first
  // tens of thousands of requests run at about half speed, before V8 has optimised them), then
  // measured.
  const bare = createWebhookSender("http", { timeoutMs: 10_000, concurrency: CONCURRENCY });
  const sendBare = async (count: number) => {
    let sent = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (sent++ < count) await bare.send(posted);
      }),
    );
  };
  await sendBare(warmUp);
  await receiver.reset(false);
  const bareCpu = process.cpuUsage();
  const bareStarted = performance.now();
  await sendBare(measured);
  const bareRate = measured / ((performance.now() - bareStarted) / 1000);
  const bareCpuPer = cpuMicros(process.cpuUsage(bareCpu)) / measured;
  await bare.close();

  await receiver.reset(false);
  const { dispatcher, stop } = await dispatcherOn(store, spec, clock);
  const warm = receiver.reached(warmUp);
  const coldStarted = performance.now();
  dispatcher.start();
  await warm;
  const coldRate = warmUp / ((performance.now() - coldStarted) / 1000);
  // The receiver counts on: the measure starts where the warm-up ended, with no pause between.
  const reached = receiver.reached(stored);
  const dispatchCpu = process.cpuUsage();
  const started = performance.now();
  await reached;
  const receivedSeconds = (performance.now() - started) / 1000;
  await dispatcher.idle();
  const recordedSeconds = (performance.now() - started) / 1000;
  const dispatchCpuPer = cpuMicros(process.cpuUsage(dispatchCpu)) / measured;
  await stop();
  const delivered = (
    await store.webhookDeliveries.list(
      account.id,
      { state: "delivered" },
      { limit: 0, count: true },
    )
  ).total;
  const floorCpuPer = await storeFloor(store, account.id, sample, measured);
  await store.close();

  // The dispatcher again (warm from the run above), its store side answered from memory.
  await receiver.reset(false);
  const ready = new ReadyDeliveries(webhook!, sample, measured);
  const alone = await dispatcherWith(ready, clock);
  const readyReached = receiver.reached(measured);
  const readyCpu = process.cpuUsage();
  const readyStarted = performance.now();
  alone.dispatcher.start();
  await readyReached;
  const readyRate = measured / ((performance.now() - readyStarted) / 1000);
  const readyCpuPer = cpuMicros(process.cpuUsage(readyCpu)) / measured;
  await alone.stop();

  const rate = measured / receivedSeconds;
  console.log(
    `webhook throughput: ${fmt(measured)} measurement webhooks measured after ${fmt(warmUp)} sent to warm up (one POST per record, ${sample.length} B bodies) from a SQLite file store, ${CONCURRENCY} connections`,
  );
  // CPU of every thread of the process (the receiver's too) per request: with the machine's
  // cores, the rate the work itself allows.
  const cpu = (per: number) => `${fmt(per)} µs CPU per request`;
  console.log(
    `  autocannon POST → receiver:        ${fmt(cannonRate)} req/s, ${cpu(cannonCpuPer)}`,
  );
  console.log(`  the sender alone (undici, no store): ${fmt(bareRate)} req/s, ${cpu(bareCpuPer)}`);
  console.log(
    `  dispatcher → receiver:             ${fmt(rate)} webhooks/s received (${fmt(measured / recordedSeconds)}/s with every attempt recorded; ${fmt(delivered ?? 0)} delivered in the log), ${cpu(dispatchCpuPer)}`,
  );
  console.log(`  the dispatcher's cold start (the warm-up): ${fmt(coldRate)} webhooks/s`);
  console.log(
    `  the dispatcher without a store (deliveries ready in memory, nothing recorded): ${fmt(readyRate)} webhooks/s, ${cpu(readyCpuPer)}: ${((100 * readyRate) / cannonRate).toFixed(0)} % of autocannon, the most any store could leave it`,
  );
  console.log(
    `  dispatcher / autocannon: ${((100 * rate) / cannonRate).toFixed(0)} % (target ≥ 50 %: ${rate >= 0.5 * cannonRate ? "met" : "NOT met"}); dispatcher / sender alone: ${((100 * rate) / bareRate).toFixed(0)} %`,
  );
  console.log(
    `  ${CORES} cores at ${fmt(dispatchCpuPer)} µs per delivery allow at most ${fmt((CORES * 1e6) / dispatchCpuPer)} webhooks/s`,
  );
  const ceiling = (CORES * 1e6) / (bareCpuPer + floorCpuPer);
  console.log(
    `  the store's part alone (a delivery created, then recorded delivered with its attempt, in batches of ${FLOOR_BATCH}): ${fmt(floorCpuPer)} µs CPU per delivery; with the sender alone's, ${CORES} cores allow at most ${fmt(ceiling)} webhooks/s, ${((100 * ceiling) / cannonRate).toFixed(0)} % of autocannon, before reading a measurement or building a body`,
  );
}

// 2. Latency at 1,000 readings per second ----------------------------------------------------------
for (const postAsArray of LATENCY_SECONDS > 0 ? [true, false] : []) {
  const devices = devicesFor(200);
  const streams = devices.map((d, i) => messagesOf(d, i, 60));
  const total = READINGS_PER_SECOND * LATENCY_SECONDS;
  const messages = interleave(streams, total);
  const spec = `sqlite:${join(dir, `latency-${postAsArray}.db`)}`;
  const store = await lab(spec, devices, postAsArray, clock);
  // As `rpmlab serve` does: batches commit in a worker thread on the SQLite file.
  const processor = new WorkerProcessor({ storeSpec: spec, catalogue, clock });
  await processor.start();
  const { dispatcher, stop } = await dispatcherOn(store, spec, clock);
  dispatcher.start();
  await receiver.reset(true);

  const storedAt = new Map<string, number>();
  let records = 0;
  let webhooks = 0;
  const perTick = (READINGS_PER_SECOND * TICK_MS) / 1000;
  const commits: Promise<void>[] = [];
  const started = performance.now();
  for (let sent = 0, tick = 0; sent < messages.length; tick++) {
    const due = started + tick * TICK_MS;
    const wait = due - performance.now();
    if (wait > 0) await clock.sleep(wait);
    const batch = messages.slice(sent, sent + perTick);
    sent += batch.length;
    commits.push(
      processor.process(batch).then((result) => {
        const at = performance.timeOrigin + performance.now();
        for (const row of result.stored) {
          storedAt.set(`${row.deviceId}|${row.metric}|${toIsoMicros(row.timestamp)}`, at);
        }
        records += result.stored.length;
        webhooks += postAsArray
          ? new Set(result.stored.map((r) => `${r.deviceId}|${r.timestamp}`)).size
          : result.stored.length;
        dispatcher.nudge();
      }),
    );
  }
  await Promise.all(commits);
  const ingestSeconds = (performance.now() - started) / 1000;
  await receiver.reached(webhooks);
  await dispatcher.idle();
  const arrivals = await receiver.arrivals();
  const latencies = [...storedAt].map(([key, at]) => (arrivals.get(key) ?? Number.NaN) - at);
  const missing = latencies.filter(Number.isNaN).length;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  await stop();
  await processor.stop();
  await store.close();
  console.log(
    `webhook latency, ${postAsArray ? "post_as_array (one webhook per reading)" : "one POST per record"}: ${fmt(messages.length)} readings (${fmt(records)} records, ${fmt(webhooks)} webhooks) stored at ${fmt(messages.length / ingestSeconds)} readings/s`,
  );
  console.log(
    `  stored → received: p50 ${pct(0.5).toFixed(1)} ms  p99 ${pct(0.99).toFixed(1)} ms  max ${latencies.at(-1)!.toFixed(1)} ms${missing > 0 ? `  (${missing} missing)` : ""}`,
  );
}

clock.dispose();
await receiver.stop();
rmSync(dir, { recursive: true, force: true });
