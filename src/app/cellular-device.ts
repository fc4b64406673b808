import { Catalogue } from "../catalogue/catalogue.ts";
import {
  CellularDevice,
  type CellularDeviceCounts,
  deviceImei,
  readingKey,
} from "../cellular/device.ts";
import { outboxDirectory } from "../cellular/outbox.ts";
import type { AdminTarget } from "../config/admin-target.ts";
import { redactBrokerSpec } from "../config/broker-spec.ts";
import { type Clock, SystemClock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { MS_PER_DAY, PAST_YEAR_9999_MS, toIsoMicros } from "../core/time.ts";
import { VirtualClock } from "../core/virtual-clock.ts";
import { generateReadings } from "../readings/generate.ts";
import type { GeneratedReading } from "../readings/generated.ts";
import { PatientModels } from "../readings/patients.ts";
import { AdminClient } from "./admin-client.ts";

export interface CellularDeviceAppOptions {
  /** Device type, current or legacy name; must be a cellular one. */
  readonly profile: string;
  /** mqtt:// or mqtts:// URL of the broker (a serve's mqtt_url, or any broker). */
  readonly broker: string;
  readonly imei?: string | undefined;
  /**
   * Given credentials, or the admin API of a running serve to issue them
   * (POST /lab/v1/mqtt-credentials/), or none (a broker that takes anonymous clients).
   */
  readonly credentials:
    | { readonly kind: "given"; readonly username?: string; readonly password: string }
    | { readonly kind: "issue"; readonly admin: AdminTarget }
    | { readonly kind: "none" };
  readonly seed: string;
  readonly patient: string;
  readonly days: number;
  /** First instant (ms); default now. */
  readonly start?: number | undefined;
  /** Take a reading every this many ms from the start instead of on the patient's schedule. */
  readonly everyMs?: number | undefined;
  readonly duplicateRate: number;
  /** Clock: real time, or virtual time at a speed factor (virtual ms per real ms), or max. */
  readonly speed: "real" | number;
  readonly outboxDir?: string | undefined;
  /** One call per event: started, reading, sent, link, summary. */
  readonly onEvent: (event: Record<string, unknown>) => void;
  /** Aborts to stop early (SIGINT, SIGTERM), whatever it is doing: connecting included. */
  readonly signal: AbortSignal;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** After the last reading, how long (Clock time) a device keeps trying to send its backlog. */
const DRAIN_LIMIT_MS = 7 * 24 * HOUR;

/**
 * `rpmlab device <cellular type> --broker URL`: one direct-cellular device against a running
 * serve or any broker, until its readings are taken and sent (or SIGINT). Returns its counts.
 */
export async function runCellularDevice(
  options: CellularDeviceAppOptions,
): Promise<CellularDeviceCounts> {
  const profile = Catalogue.load().get(options.profile);
  const real = new SystemClock();
  // Device clocks report whole minutes (README "Measurement records"): start on one, or on a
  // whole second when readings come every few seconds (a demo: no minute's wait first).
  const grain = options.everyMs === undefined ? MINUTE : 1000;
  const start = options.start ?? Math.ceil(real.now() / grain) * grain;
  const clock: Clock =
    options.speed === "real" ? real : new VirtualClock({ startMs: start, speed: options.speed });
  const rng = new Rng(options.seed);
  let readings = generateReadings({
    devices: [profile],
    patient: PatientModels.load().get(options.patient),
    rng: rng.fork("readings"),
    start,
    days: options.days,
    duplicateRate: options.duplicateRate,
  });
  if (options.everyMs !== undefined) {
    readings = restamped(readings, start, options.everyMs);
    // --every spreads the readings over their count, not over --days (which the command
    // checked): the device's Date Time ends with 9999, and a day is kept for re-sends.
    const last = readings.at(-1)?.timestamp;
    if (last !== undefined && last + MS_PER_DAY > PAST_YEAR_9999_MS) {
      throw new RpmlabError(
        "E_CONFIG_INVALID",
        `--every ${options.everyMs / 1000} from --start takes its ${readings.length} readings past 9999-12-31, which the device's Date Time (years 1582–9999) cannot write`,
        { field: "--every" },
      );
    }
  }
  const { signal } = options;
  try {
    const imei = options.imei ?? deviceImei(rng.fork("device"));
    // Before the serve is asked for credentials: asking rotates the IMEI's password, which a
    // device that then cannot keep its outbox would have changed for nothing.
    if (options.outboxDir !== undefined) outboxDirectory(options.outboxDir);
    const device = await CellularDevice.open({
      profile,
      clock,
      rng: rng.fork("device"),
      imei,
      readings,
      broker: { url: options.broker, ...(await credentialsFor(options, imei)) },
      ...(options.outboxDir === undefined ? {} : { outbox: { dir: options.outboxDir } }),
    });
    try {
      report(device, profile.name, options, readings.length, clock);
      try {
        await device.start(signal);
      } catch (error) {
        // Stopped while waiting for the broker (one that never answers takes 10 s to time out):
        // the usual end of a stopped run, summary included, rather than a broker failure.
        if (!signal.aborted) throw error;
      }
      if (clock instanceof VirtualClock) await driveVirtual(clock, device, signal);
      else await driveReal(device, signal);
      // Counted before the stop: what is still queued stays in the outbox.
      const stats = device.stats;
      // snake_case as every other event's keys (and the HWI API's).
      options.onEvent({
        event: "summary",
        imei: device.imei,
        taken: stats.taken,
        sent: stats.sent,
        stored_offline: stats.storedOffline,
        lost_by_design: stats.lostByDesign,
        dropped: stats.dropped,
        duplicates_sent: stats.duplicatesSent,
        queued: stats.queued,
      });
      if (device.failure !== undefined) throw device.failure;
      return stats;
    } finally {
      await device.stop();
    }
  } finally {
    real.dispose();
  }
}

/** Credentials as given, issued by a serve for the device's IMEI, or none. */
async function credentialsFor(
  options: CellularDeviceAppOptions,
  imei: string,
): Promise<{ username?: string; password?: string }> {
  const c = options.credentials;
  if (c.kind === "none") return {};
  if (c.kind === "given") return { username: c.username ?? imei, password: c.password };
  const issued = await new AdminClient(c.admin).post<{ username: string; password: string }>(
    "mqtt-credentials/",
    { role: "cellular", username: imei },
  );
  return { username: issued.username, password: issued.password };
}

function report(
  device: CellularDevice,
  deviceType: string,
  options: CellularDeviceAppOptions,
  readings: number,
  clock: Clock,
): void {
  const emit = options.onEvent;
  emit({
    event: "started",
    imei: device.imei,
    device_type: deviceType,
    broker: redactBrokerSpec(options.broker),
    readings,
    iccid: device.modem.identity.iccid,
    firmware_version: device.modem.identity.firmwareVersion,
  });
  device.events.on("reading", ({ at, reading, sequence, fate }) =>
    emit({
      event: "reading",
      at: toIsoMicros(at),
      /** The device clock's time of the reading (what the API shows as its timestamp). */
      timestamp: toIsoMicros(reading.timestamp),
      sequence,
      fate,
      duplicate: reading.duplicate,
      records: reading.records.map((r) => ({
        metric: r.metric,
        value_1: r.value_1,
        value_2: r.value_2,
      })),
    }),
  );
  device.events.on("sent", ({ at, messageId, readings: n }) =>
    emit({ event: "sent", at: toIsoMicros(at), message_id: messageId, readings: n }),
  );
  device.events.on("link", ({ at, up, cause, signal }) =>
    emit({ event: "link", at: toIsoMicros(at), up, cause, signal }),
  );
  device.modem.session.events.on("connectFailed", (error) =>
    emit({
      event: "connect_failed",
      at: toIsoMicros(clock.now()),
      code: (error as { code?: unknown }).code,
      error: error.message,
    }),
  );
  device.modem.outbox.events.on("setAside", ({ seq, error }) =>
    emit({
      event: "set_aside",
      seq,
      code: error.code,
      field: error.details.field,
      error: error.message,
    }),
  );
}

/**
 * Virtual time in steps, letting the modem's real network I/O finish in between: an hour at
 * `max`, a wall second's worth at a finite speed (as the scenario runner steps), so a Ctrl-C is
 * taken within a second — an hour at `--speed 10` is six wall minutes.
 */
async function driveVirtual(
  clock: VirtualClock,
  device: CellularDevice,
  signal: AbortSignal,
): Promise<void> {
  // A wall second's worth even below 1× (at 0.01×, 10 virtual ms): a second of virtual time
  // would hold the Ctrl-C for 100 wall seconds.
  const step = Math.max(1, Math.min(HOUR, Math.round(clock.speed * 1000)));
  const settle = async () => {
    await device.modem.session.settled();
    await device.modem.drainer.settled();
  };
  const stopped = () => signal.aborted || device.failure !== undefined;
  while (!device.finished && !stopped()) {
    await clock.run({ until: clock.now() + step });
    await settle();
  }
  const limit = clock.now() + DRAIN_LIMIT_MS;
  while (device.stats.queued > 0 && clock.now() < limit && !stopped()) {
    await clock.run({ until: clock.now() + Math.min(60_000, step) });
    await settle();
  }
}

/**
 * Real time: until every reading is taken and the outbox is empty, the signal, or the outbox
 * failing.
 */
async function driveReal(device: CellularDevice, signal: AbortSignal): Promise<void> {
  const done = new Promise<void>((resolve) => {
    signal.addEventListener("abort", () => resolve(), { once: true });
    const check = () => {
      if (device.finished && device.stats.queued === 0) resolve();
    };
    device.events.on("finished", check);
    device.events.on("sent", check);
    device.events.on("failed", () => resolve());
    if (signal.aborted) resolve();
    check();
  });
  await done;
}

/**
 * The readings re-timed one every `everyMs` from `start` (a demo in real time), values and
 * order kept; a re-send keeps the new time of its original.
 */
function restamped(
  readings: readonly GeneratedReading[],
  start: number,
  everyMs: number,
): GeneratedReading[] {
  const times = new Map<string, number>();
  let k = 0;
  return readings.map((r) => {
    const key = readingKey(r);
    let timestamp = times.get(key);
    if (timestamp === undefined || !r.duplicate) {
      timestamp = start + ++k * everyMs;
      times.set(key, timestamp);
    }
    return { ...r, timestamp };
  });
}
