import type { Command } from "commander";
import { runCellularDevice } from "../app/cellular-device.ts";
import { untilSignal } from "../app/until-signal.ts";
import { Catalogue } from "../catalogue/catalogue.ts";
import { adminTarget } from "../config/admin-target.ts";
import { parseBrokerSpec } from "../config/broker-spec.ts";
import { MQTT_PASSWORD_ENV, mqttPassword } from "../config/mqtt-password.ts";
import { RpmlabError } from "../core/errors.ts";
import { MS_PER_DAY, PAST_YEAR_9999_MS, parseIso } from "../core/time.ts";
import { IMEI_PATTERN } from "../mqtt/envelope.ts";
import { DEFAULT_DUPLICATE_RATE, MAX_DAYS } from "../readings/generate.ts";
import { decimal } from "./decimal.ts";
import type { CliIo } from "./io.ts";
import { seedText } from "./seed.ts";

/** Flags of `rpmlab device` that only a direct-cellular type takes. */
const CELLULAR_FLAGS = [
  "broker",
  "imei",
  "username",
  "password",
  "url",
  "adminToken",
  "patient",
  "days",
  "start",
  "speed",
  "duplicateRate",
  "outbox",
  "json",
] as const;

export interface CellularFlags {
  broker?: string;
  imei?: string;
  username?: string;
  password?: string;
  url?: string;
  adminToken?: string;
  patient: string;
  days: string;
  start?: string;
  speed?: string;
  every: string;
  duplicateRate: string;
  outbox?: string;
  json?: boolean;
  seed: string;
}

/** Adds the direct-cellular options to `rpmlab device`. */
export function addCellularOptions(command: Command): Command {
  return command
    .option(
      "--broker <url>",
      "cellular types: the MQTT broker, mqtt://host:port (serve's mqtt_url)",
    )
    .option("--imei <imei>", "cellular types: its IMEI, 15 digits (default: drawn from --seed)")
    .option("--username <name>", "cellular types: MQTT username (default: the IMEI)")
    .option(
      "--password <password>",
      `cellular types: MQTT password (or $${MQTT_PASSWORD_ENV}: a command line is readable by every local user)`,
    )
    .option(
      "--url <base-url>",
      "cellular types: a running serve that issues the credentials (or $RPMLAB_URL, else http://127.0.0.1:8000)",
    )
    .option("--admin-token <token>", "cellular types: its admin token (or $RPMLAB_ADMIN_TOKEN)")
    .option("--patient <model>", "cellular types: patient model of the readings", "normal")
    .option("--days <n>", `cellular types: days of readings, 1 to ${MAX_DAYS}`, "1")
    .option("--start <iso>", "cellular types: first instant (default: the next whole minute)")
    .option(
      "--speed <factor>",
      "cellular types: virtual time, N times real time, or max (default: real time)",
    )
    .option(
      "--duplicate-rate <p>",
      "cellular types: share of readings re-sent",
      String(DEFAULT_DUPLICATE_RATE),
    )
    .option("--outbox <dir>", "cellular types: keep the outbox on disk here (default: memory)")
    .option("--json", "cellular types: one JSON line per event");
}

function usage(message: string): RpmlabError {
  return new RpmlabError("E_USAGE", message);
}

function invalid(option: string, message: string): RpmlabError {
  return new RpmlabError("E_CONFIG_INVALID", `${option} ${message}`, { field: option });
}

/**
 * Which kind of device the command runs, with a usage error when the flags are of the other
 * kind: a gateway-connected type is a BLE peripheral (--ble); a direct-cellular type has its
 * own modem (--broker).
 */
export function isCellularRun(profileName: string, command: Command): boolean {
  const profile = Catalogue.load().get(profileName);
  const given = (flag: string) => command.getOptionValueSource(flag) === "cli";
  if (profile.connectivity === "cellular") {
    if (given("ble")) {
      throw usage(
        `${profile.name} is a direct-cellular device with its own modem: give --broker mqtt://host:port, not --ble`,
      );
    }
    if (given("address")) {
      throw usage(
        `${profile.name} is a direct-cellular device, known by its IMEI: --address is for BLE devices`,
      );
    }
    if (!given("broker")) {
      throw usage(
        `${profile.name} is a direct-cellular device: give --broker mqtt://host:port (rpmlab serve prints its mqtt_url)`,
      );
    }
    return true;
  }
  const wrong = CELLULAR_FLAGS.filter(given);
  if (wrong.length > 0) {
    throw usage(
      `${profile.name} connects through a gateway over BLE: --${wrong
        .map((f) => f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))
        .join(
          ", --",
        )} ${wrong.length === 1 ? "is" : "are"} for direct-cellular types only; use --ble`,
    );
  }
  return false;
}

/**
 * The device's clock writes its readings' times as GATT Date Time, years 1582–9999 (local time,
 * a patient's offset of up to half a day off UTC: a day's margin). A --start before it failed
 * the run at its first reading with E_CODEC_RANGE, after the link was up.
 */
const EARLIEST_START_MS = Date.UTC(1582, 0, 2);

function whole(option: string, text: string, min: number, max: number): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(option, `must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

/** `rpmlab device <cellular type> --broker URL …`: parses, runs, prints. */
export async function runCellularDeviceCommand(
  profile: string,
  flags: CellularFlags,
  io: CliIo,
): Promise<void> {
  const broker = parseBrokerSpec(flags.broker!, "--broker");
  if (broker.kind !== "external") {
    throw invalid("--broker", `must be the broker's URL, mqtt://host:port, got "${flags.broker}"`);
  }
  if (flags.imei !== undefined && !IMEI_PATTERN.test(flags.imei)) {
    throw invalid("--imei", `must be 15 digits, got "${flags.imei}"`);
  }
  const given = mqttPassword(flags.password);
  if (flags.username !== undefined && given === undefined) {
    throw usage(`--username needs --password (or $${MQTT_PASSWORD_ENV})`);
  }
  if (given !== undefined && (flags.url !== undefined || flags.adminToken !== undefined)) {
    // Named: a variable left set in the shell is not something the command line shows.
    throw usage(
      given.source === "--password"
        ? "give either --password or --url/--admin-token (to have a serve issue one), not both"
        : `$${MQTT_PASSWORD_ENV} is set: give either it or --url/--admin-token (to have a serve issue one), not both; unset it to have the serve issue credentials`,
    );
  }
  const start = flags.start === undefined ? undefined : parseIso(flags.start);
  if (flags.start !== undefined && start === undefined) {
    throw invalid("--start", `must be an ISO 8601 date or date-time, got "${flags.start}"`);
  }
  const days = whole("--days", flags.days, 1, MAX_DAYS);
  if (start !== undefined && start < EARLIEST_START_MS) {
    throw invalid(
      "--start",
      `must be 1582-01-02 or later: the device's clock writes Date Time, years 1582–9999, got "${flags.start}"`,
    );
  }
  // As `rpmlab readings`: a day's margin for re-sends; past 9999 neither the device's Date Time
  // nor the envelope's four-digit-year times (received_at, sent_at) can write it.
  if (start !== undefined && start + (days + 1) * MS_PER_DAY > PAST_YEAR_9999_MS) {
    throw invalid(
      "--start",
      `with --days ${days} runs past 9999-12-31, which the device's Date Time (years 1582–9999) cannot write`,
    );
  }
  let speed: "real" | number = "real";
  if (flags.speed === "max") speed = Number.POSITIVE_INFINITY;
  else if (flags.speed !== undefined) {
    speed = decimal(flags.speed);
    if (!(speed > 0 && Number.isFinite(speed))) {
      throw invalid("--speed", `must be a decimal number > 0 or max, got "${flags.speed}"`);
    }
  }
  const duplicateRate = decimal(flags.duplicateRate);
  if (!(duplicateRate >= 0 && duplicateRate < 1)) {
    throw invalid("--duplicate-rate", `must be from 0 to below 1, got "${flags.duplicateRate}"`);
  }
  const every = whole("--every", flags.every, 0, 86_400);
  const seed = seedText(flags.seed);
  let credentials: Parameters<typeof runCellularDevice>[0]["credentials"] = { kind: "none" };
  if (given !== undefined) {
    credentials = {
      kind: "given",
      password: given.password,
      ...(flags.username === undefined ? {} : { username: flags.username }),
    };
  } else if (flags.url !== undefined || flags.adminToken !== undefined) {
    credentials = { kind: "issue", admin: adminTarget(flags) };
  }
  // As `rpmlab demo`: the first SIGINT or SIGTERM stops the run; once it has ended by itself the
  // handlers go, so a later signal is Node's again.
  const interrupted = new AbortController();
  const ended = new AbortController();
  void untilSignal(ended.signal).then(() => interrupted.abort());
  const counts = await runCellularDevice({
    profile,
    broker: broker.url,
    imei: flags.imei,
    credentials,
    seed,
    patient: flags.patient,
    days,
    start,
    everyMs: every === 0 ? undefined : every * 1000,
    duplicateRate,
    speed,
    outboxDir: flags.outbox,
    onEvent: (event) => io.out(flags.json ? JSON.stringify(event) : describe(event)),
    signal: interrupted.signal,
  }).finally(() => ended.abort());
  if (counts.queued > 0) io.err(`rpmlab: ${unsentNote(counts.queued, flags.outbox)}`);
}

/** What becomes of readings still queued at the end: kept on disk, or lost with the process. */
export function unsentNote(queued: number, outboxDir: string | undefined): string {
  return outboxDir === undefined
    ? `${queued} reading(s) not sent yet are lost: the outbox was in memory (--outbox DIR keeps them for the next run)`
    : `${queued} reading(s) not sent yet stay in the outbox in ${outboxDir} for the next run`;
}

/** One event as a line of text. */
function describe(e: Record<string, unknown>): string {
  switch (e.event) {
    case "started":
      return `${e.device_type} IMEI ${e.imei} (ICCID ${e.iccid}, firmware ${e.firmware_version}) → ${e.broker}: ${e.readings} reading(s) to take`;
    case "reading": {
      const records = (e.records as { metric: string; value_1: number; value_2: number | null }[])
        .map((r) => `${r.metric} ${r.value_1}${r.value_2 === null ? "" : `/${r.value_2}`}`)
        .join(", ");
      return `${e.at} reading #${e.sequence}${e.duplicate ? " (re-send)" : ""}: ${e.fate}: ${records}`;
    }
    case "sent":
      return `${e.at} sent ${e.message_id}: ${e.readings} reading(s), acknowledged`;
    case "link":
      return `${e.at} link ${e.up ? "up" : `down (${e.cause})`}, signal ${e.signal}`;
    case "connect_failed":
      return `${e.at} reconnection failed, retrying: ${e.error}`;
    case "set_aside":
      return `outbox entry ${e.seq} set aside, not sent: ${e.error}`;
    case "summary":
      return `taken ${e.taken}, sent ${e.sent}, stored offline ${e.stored_offline}, lost by design ${e.lost_by_design}, dropped ${e.dropped}, re-sends ${e.duplicates_sent}, still queued ${e.queued}`;
    default:
      return JSON.stringify(e);
  }
}
