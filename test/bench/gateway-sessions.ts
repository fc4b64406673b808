/**
 * Concurrent gateways one lab process holds as MQTT sessions (issue 6, benchmarks): N real
 * Gateway instances — the runtime `rpmlab gateway` runs, each with its modem's persistent QoS 1
 * session, last will, downlink subscription and check-ins, a DirectBle with no devices and a
 * steady link — connected to the embedded broker (aedes, in a child process of its own, so that
 * neither process needs a file descriptor per session twice) and to the local Mosquitto
 * (127.0.0.1:1883). Connected in waves; then held for a few virtual check-in intervals on a
 * VirtualClock, while a subscriber counts the check-ins the broker delivers. Prints connect rate,
 * memory per gateway (this process) and per session (the broker's RSS), check-ins received;
 * asserts nothing.
 *
 *   node --import tsx test/bench/gateway-sessions.ts [--gateways 10000] [--wave 500]
 *     [--broker embedded|mosquitto|both]
 *
 * Each broker runs in a process of its own (this file, re-run with --broker), so one run's heap
 * does not colour the other's figures. Client ids (= gateway uuids) have a fixed prefix per
 * broker, so a re-run on Mosquitto takes over the sessions of the last one; at the end each id
 * connects once more with a clean session and clears its retained status, which removes the
 * sessions from the shared Mosquitto.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { MqttClient } from "mqtt";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { DirectRadio } from "../../src/devices/direct-device.ts";
import { CHECKIN_EVERY_MS } from "../../src/gateway/checkin-period.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { connectClient, subscribeAll } from "../../src/mqtt/client.ts";
import { topicOf } from "../../src/mqtt/topics.ts";

const { values: args } = parseArgs({
  options: {
    gateways: { type: "string", default: "10000" },
    wave: { type: "string", default: "500" },
    broker: { type: "string", default: "both" },
  },
});
const N = Number(args.gateways);
const WAVE = Number(args.wave);
/** Virtual check-in intervals the sessions are held for once all are connected. */
const HOLD_INTERVALS = 3;
/** Waiting for the broker's deliveries gives up after this long without progress (real ms). */
const STALL_MS = 20_000;
const MOSQUITTO_URL = "mqtt://127.0.0.1:1883";
const MOSQUITTO_PID_FILE = "/run/mosquitto/mosquitto.pid";
type Kind = "embedded" | "mosquitto";
/** 12-hex uuids: a fixed 6-hex prefix per broker, then the gateway's index. */
const PREFIX: Record<Kind, string> = { embedded: "5E55A0", mosquitto: "5E55B0" };

if (args.broker === "both") {
  // One process per broker (see the header); their output goes straight to ours.
  const self = fileURLToPath(import.meta.url);
  for (const kind of ["embedded", "mosquitto"]) {
    execFileSync(
      process.execPath,
      [...process.execArgv, self, "--broker", kind, "--gateways", `${N}`, "--wave", `${WAVE}`],
      { stdio: "inherit" },
    );
  }
} else if (args.broker === "embedded" || args.broker === "mosquitto") {
  await bench(args.broker);
} else {
  throw new Error(`--broker embedded|mosquitto|both, got ${args.broker}`);
}

async function bench(kind: Kind): Promise<void> {
  const broker = kind === "embedded" ? await startEmbedded() : mosquitto();
  const prefix = PREFIX[kind];
  const uuids = Array.from(
    { length: N },
    (_, g) => `${prefix}${g.toString(16).toUpperCase().padStart(6, "0")}`,
  );
  const catalogue = Catalogue.load();
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5) });

  // Check-ins as the broker delivers them: live (not retained) `online: true` statuses. One
  // counting client per wave's gateways, subscribed to their status topics: a burst of N
  // check-ins to one QoS 1 subscriber would overflow Mosquitto's queue for it
  // (max_queued_messages, 1,000 by default), which drops the excess.
  const perGateway = new Map<string, number>();
  let received = 0;
  const counters: MqttClient[] = [];
  for (let i = 0; i < N; i += WAVE) {
    const counter = await connectClient(broker.url, {
      clientId: `${prefix}-count${i / WAVE}`,
      clean: true,
      reconnectPeriod: 0,
    });
    counter.on("message", (topic, payload, packet) => {
      if (packet.retain) return;
      if ((JSON.parse(payload.toString()) as { online?: boolean }).online !== true) return;
      const uuid = topic.split("/")[3] ?? "";
      received++;
      perGateway.set(uuid, (perGateway.get(uuid) ?? 0) + 1);
    });
    await subscribeAll(
      counter,
      uuids.slice(i, i + WAVE).map((uuid) => topicOf("gw/status", uuid)),
    );
    counters.push(counter);
  }

  const gc = exposeGc();
  const mem0 = memory(gc);
  const broker0 = await broker.measure();
  const gateways: Gateway[] = [];
  let failed = 0;
  let firstError = "";
  const t0 = performance.now();
  const waveS: number[] = [];
  for (let i = 0; i < N; i += WAVE) {
    const w0 = performance.now();
    const wave = await Promise.allSettled(
      uuids.slice(i, i + WAVE).map(async (uuid) => {
        const gateway = await Gateway.open({
          clock,
          rng: new Rng(`sessions/${uuid}`),
          catalogue,
          gatewayUuid: uuid,
          broker: { url: broker.url },
          ble: new DirectBle(new DirectRadio()),
          link: { profile: STEADY_LINK_PROFILE },
        });
        await gateway.start();
        return gateway;
      }),
    );
    for (const r of wave) {
      if (r.status === "fulfilled") gateways.push(r.value);
      else {
        failed++;
        firstError ||= String(r.reason);
      }
    }
    waveS.push((performance.now() - w0) / 1000);
  }
  const connectS = (performance.now() - t0) / 1000;
  const connected = gateways.length;
  // Each connection checks in once: wait for the broker to deliver those.
  await until(() => received, connected);
  const atConnect = received;
  const mem1 = memory(gc);
  const broker1 = await broker.measure();

  // Held: every gateway checks in each virtual interval; the link's samples run meanwhile.
  const t1 = performance.now();
  for (let k = 1; k <= HOLD_INTERVALS; k++) {
    await clock.run({ until: clock.now() + CHECKIN_EVERY_MS });
    await until(() => received, connected * (1 + k));
  }
  const holdS = (performance.now() - t1) / 1000;
  const held = received - atConnect;
  const everyInterval = gateways.filter(
    (g) => (perGateway.get(g.uuid) ?? 0) >= 1 + HOLD_INTERVALS,
  ).length;
  const acked = gateways.reduce((n, g) => n + g.stats.checkins, 0);

  const t2 = performance.now();
  for (let i = 0; i < gateways.length; i += WAVE) {
    await Promise.all(gateways.slice(i, i + WAVE).map((g) => g.stop()));
  }
  const closeS = (performance.now() - t2) / 1000;
  await Promise.all(counters.map((c) => c.endAsync()));
  const cleaned = kind === "mosquitto" ? await forget(broker.url, uuids) : 0;
  await broker.stop();

  const name = kind === "embedded" ? "embedded aedes" : "local Mosquitto";
  const rss = mem1.rss - mem0.rss;
  const heap = mem1.heap - mem0.heap;
  const brokerDelta =
    broker0 === undefined || broker1 === undefined
      ? "broker RSS unreadable"
      : `broker +${mb(broker1.rss - broker0.rss)} RSS = ${kb((broker1.rss - broker0.rss) / connected)}/session (` +
        (broker0.heap === undefined || broker1.heap === undefined
          ? ""
          : `heap +${mb(broker1.heap - broker0.heap)} = ${kb((broker1.heap - broker0.heap) / connected)}/session; `) +
        `${mb(broker0.rss)} → ${mb(broker1.rss)}` +
        (broker0.peak === undefined
          ? ")"
          : `; its peak before: ${mb(broker0.peak)}, below which memory freed by earlier clients is reused, uncounted)`);
  console.log(
    `${name}: ${fmt(connected)} gateways connected in ${connectS.toFixed(1)} s (${fmt(connected / connectS)} sessions/s; waves of ${WAVE}: first ${waveS[0]!.toFixed(1)} s, last ${waveS.at(-1)!.toFixed(1)} s${failed > 0 ? `, ${fmt(failed)} failed: ${firstError}` : ""}); ` +
      `gateway process +${mb(rss)} RSS = ${kb(rss / connected)}/gateway (heap +${mb(heap)} = ${kb(heap / connected)}/gateway; ${mb(mem1.rss)} RSS in all); ` +
      `${brokerDelta}; check-ins received ${fmt(atConnect)}/${fmt(connected)}; load average ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(
    `${name}: held ${HOLD_INTERVALS} virtual check-in intervals (${CHECKIN_EVERY_MS / 60_000} min) in ${holdS.toFixed(1)} s: ` +
      `${fmt(held)}/${fmt(connected * HOLD_INTERVALS)} check-ins received, ${fmt(everyInterval)}/${fmt(connected)} gateways heard every interval, ` +
      `${fmt(acked)} PUBACKed in all; closed in ${closeS.toFixed(1)} s` +
      (kind === "mosquitto" ? `; ${fmt(cleaned)} sessions and retained statuses removed` : ""),
  );
}

/** Bytes; `peak` is the RSS high-water mark, for a broker this benchmark did not start. */
interface BrokerMemory {
  readonly rss: number;
  readonly heap?: number;
  readonly peak?: number;
}

interface BenchBroker {
  readonly url: string;
  /** After a full collection where the broker is ours; undefined when it cannot be read. */
  measure(): Promise<BrokerMemory | undefined>;
  stop(): Promise<void>;
}

async function startEmbedded(): Promise<BenchBroker> {
  const script = fileURLToPath(new URL("_embedded-broker.ts", import.meta.url));
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value as string) as unknown;
  const { url } = (await next()) as { url: string };
  return {
    url,
    async measure() {
      child.stdin!.write("measure\n");
      return (await next()) as BrokerMemory;
    },
    async stop() {
      const exited = once(child, "exit");
      child.stdin!.end();
      await exited;
    },
  };
}

function mosquitto(): BenchBroker {
  let pid: number | undefined;
  try {
    pid = Number(readFileSync(MOSQUITTO_PID_FILE, "utf8").trim());
  } catch {
    pid = undefined;
  }
  return {
    url: MOSQUITTO_URL,
    async measure() {
      const rss = procStatusKb(pid, "VmRSS");
      const peak = procStatusKb(pid, "VmHWM");
      return rss === undefined ? undefined : { rss: rss * 1024, peak: (peak ?? 0) * 1024 };
    },
    stop: async () => {},
  };
}

/**
 * Removes the runs' sessions from the shared broker: each id connects with a clean session
 * ([MQTT-3.1.2-6]: the broker discards the persistent one), clears its retained status, and
 * disconnects. Returns how many were removed.
 */
async function forget(url: string, uuids: readonly string[]): Promise<number> {
  let removed = 0;
  for (let i = 0; i < uuids.length; i += WAVE) {
    const wave = await Promise.allSettled(
      uuids.slice(i, i + WAVE).map(async (uuid) => {
        const client = await connectClient(url, {
          clientId: uuid,
          clean: true,
          reconnectPeriod: 0,
        });
        await client.publishAsync(topicOf("gw/status", uuid), "", { qos: 1, retain: true });
        await client.endAsync();
      }),
    );
    removed += wave.filter((r) => r.status === "fulfilled").length;
  }
  return removed;
}

/** Waits until `count()` reaches `target`, or stops moving for STALL_MS (then the figure says so). */
async function until(count: () => number, target: number): Promise<void> {
  let last = count();
  let since = performance.now();
  while (count() < target && performance.now() - since < STALL_MS) {
    await delay(50);
    if (count() !== last) {
      last = count();
      since = performance.now();
    }
  }
}

/** The V8 collector, so memory is read after a full collection (benchmarks run without flags). */
function exposeGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

function memory(gc: () => void): { rss: number; heap: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
}

/** A kB field of /proc/PID/status (VmRSS, VmHWM); undefined when /proc does not let us read it. */
function procStatusKb(pid: number | undefined, field: string): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

function mb(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MB`;
}

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}
