import type { Profile } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { MS_PER_MINUTE, toIsoMicros } from "../core/time.ts";
import type { GeneratedReading } from "./generated.ts";
import { type IdentityOverrides, resolveIdentities } from "./identity.ts";
import type { FilterParams } from "./types.ts";

/** A measurement record as the API shows it (spec 2.5, wire-formats.md "Measurement record"). */
export interface ApiMeasurement {
  readonly id: number;
  readonly metric_type: string;
  readonly metric: string;
  readonly device_name: string;
  readonly hwi_device_id: string;
  readonly patient_id: string;
  readonly hardware_uuid: string | null;
  /** A string ("10"); null for direct-cellular devices, which have none (spec 2.8). */
  readonly sensor_code: string | null;
  /** Two decimals, e.g. "86.00". */
  readonly value_1: string;
  /** "0.00" when the metric has no value 2. */
  readonly value_2: string;
  /** Server receipt time, ISO with microseconds. */
  readonly created: string;
  /** Device clock, ISO with microseconds and Z. */
  readonly timestamp: string;
  /** Whole hours. */
  readonly timezone_offset: number;
  readonly estimated_timestamp: boolean;
  readonly filter_params: FilterParams | null;
}

export interface RenderOptions {
  /** Profiles of the devices the readings come from (device_name, sensor_code, connectivity). */
  readonly profiles: readonly Profile[];
  /** Stream for receipt latencies and drawn identities ("api" fork of the run, say). */
  readonly rng: Rng;
  /** id of the first record; ids go up by one in order. Default 1. */
  readonly firstId?: number;
  readonly identity?: IdentityOverrides;
}

/** Upload latency after a reading, in microseconds: BLE + gateway uplink, or the modem's. */
const LATENCY_US: Readonly<Record<"gateway" | "cellular", readonly [number, number]>> = {
  gateway: [8_000_000, 45_000_000],
  cellular: [15_000_000, 90_000_000],
};
/** A re-sent reading arrives again minutes to two hours after the first upload. */
const RESEND_MINUTES: [number, number] = [2, 120];

/** ISO with microseconds of `ms` plus `micros` (toIsoMicros renders whole milliseconds). */
export function isoWithMicros(ms: number, micros: number): string {
  return `${toIsoMicros(ms).slice(0, -4)}${String(micros).padStart(3, "0")}Z`;
}

/**
 * Records as the API shows them: one per metric record, ids increasing in order, values as
 * two-decimal strings, created = receipt time (timestamp plus a short upload latency drawn per
 * device; re-sent readings from a separate stream, so dropping them changes no other record's
 * created).
 */
export function renderReadings(
  readings: readonly GeneratedReading[],
  options: RenderOptions,
): ApiMeasurement[] {
  const identities = resolveIdentities(options.profiles, options.rng, options.identity);
  const devices = new Map(
    options.profiles.map((p) => {
      const upload = options.rng.fork(`upload:${p.name}`);
      const resend = options.rng.fork(`upload:${p.name}:resent`);
      return [p.name, { profile: p, identity: identities.devices.get(p.name)!, upload, resend }];
    }),
  );
  let id = options.firstId ?? 1;
  const out: ApiMeasurement[] = [];
  for (const reading of readings) {
    const device = devices.get(reading.device);
    if (device === undefined) {
      throw new RpmlabError("E_USAGE", `no profile given for device "${reading.device}"`, {
        field: "profiles",
      });
    }
    const [low, high] = LATENCY_US[device.profile.connectivity];
    let latency = (reading.duplicate ? device.resend : device.upload).int(low, high);
    if (reading.duplicate) latency += device.resend.int(...RESEND_MINUTES) * MS_PER_MINUTE * 1000;
    const created = isoWithMicros(reading.timestamp + Math.floor(latency / 1000), latency % 1000);
    const timestamp = toIsoMicros(reading.timestamp);
    for (const record of reading.records) {
      out.push({
        id: id++,
        metric_type: record.metric,
        metric: record.metric,
        device_name: reading.device,
        hwi_device_id: device.identity.hwi_device_id,
        patient_id: identities.patientId,
        hardware_uuid: device.identity.hardware_uuid,
        sensor_code: device.profile.sensor_code,
        value_1: record.value_1.toFixed(2),
        value_2: record.value_2 === null ? "0.00" : record.value_2.toFixed(2),
        created,
        timestamp,
        timezone_offset: reading.timezone_offset,
        estimated_timestamp: false,
        filter_params: record.filter_params,
      });
    }
  }
  return out;
}
