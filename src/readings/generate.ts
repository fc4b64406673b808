import type { Profile, ProfileFamily } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { epochFromUtc, MS_PER_DAY } from "../core/time.ts";
import type { DeviceSettings } from "./capabilities/capability.ts";
import { deviceReadings } from "./device.ts";
import { type Emission, emissions } from "./duplicates.ts";
import type { GeneratedReading } from "./generated.ts";
import type { PatientModel } from "./patient-schema.ts";
import { PatientState } from "./physiology/patient-state.ts";

/** Share of readings a device re-sends unless told otherwise. */
export const DEFAULT_DUPLICATE_RATE = 0.02;
/**
 * Default start of generation: a fixed instant, not the wall clock, so the same command prints
 * the same readings on any day.
 */
export const DEFAULT_START = epochFromUtc({
  year: 2026,
  month: 1,
  day: 1,
  hours: 0,
  minutes: 0,
  seconds: 0,
});
/** Whose readings a proximity band accompanies unless told otherwise (spec 2.8). */
export const DEFAULT_COMPANION: ProfileFamily = "blood_pressure_monitor";
/** Longest period one call generates: ten years. */
export const MAX_DAYS = 3660;

export interface GenerateOptions {
  /** The patient's devices; each gets its own stream, so adding one changes no other. */
  readonly devices: readonly Profile[];
  readonly patient: PatientModel;
  /** The patient's stream; every draw is a fork of it. */
  readonly rng: Rng;
  /** First instant, ms since the epoch UTC. Default DEFAULT_START. */
  readonly start?: number;
  /** Whole days to generate from the start. */
  readonly days: number;
  /** Share of readings each device re-sends (0 ≤ rate < 1). Default DEFAULT_DUPLICATE_RATE. */
  readonly duplicateRate?: number;
  /** Family whose readings a proximity band accompanies. Default DEFAULT_COMPANION. */
  readonly companion?: ProfileFamily;
  /** Per-device settings by profile name (e.g. an inhaler's serial number). */
  readonly settings?: Readonly<Record<string, DeviceSettings>>;
}

function check(options: GenerateOptions): { start: number; rate: number } {
  const start = options.start ?? DEFAULT_START;
  const rate = options.duplicateRate ?? DEFAULT_DUPLICATE_RATE;
  const bad = (field: string, message: string) =>
    new RpmlabError("E_CONFIG_INVALID", `${field} ${message}`, { field });
  if (!Number.isInteger(options.days) || options.days < 1 || options.days > MAX_DAYS) {
    throw bad("days", `must be a whole number from 1 to ${MAX_DAYS}, got ${options.days}`);
  }
  if (!Number.isFinite(start)) throw bad("start", `must be a finite instant, got ${start}`);
  if (!(rate >= 0 && rate < 1)) throw bad("duplicateRate", `must be in [0, 1), got ${rate}`);
  const names = options.devices.map((d) => d.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw bad("devices", `list "${twice}" twice`);
  return { start, rate };
}

/**
 * Readings of a patient's devices over `days` days: physical readings as the devices take them
 * (values plausible for the patient model, clamped and rounded to each profile's metric spec)
 * and the devices' re-sends, in the order they are sent. The same options and seed give the same
 * output, byte for byte.
 */
export function generateReadings(options: GenerateOptions): GeneratedReading[] {
  const { start, rate } = check(options);
  const window = { start, end: start + options.days * MS_PER_DAY };
  const patient = new PatientState(options.patient, options.rng, start, options.days);
  const companion = options.companion ?? DEFAULT_COMPANION;
  const perDevice: Emission[][] = options.devices.map((profile) => {
    const readings = deviceReadings(
      profile,
      patient,
      options.rng,
      window,
      options.settings?.[profile.name] ?? {},
      companion,
    );
    const resend = options.rng.fork(`device:${profile.name}`).fork("duplicates");
    return emissions(profile.name, readings, rate, resend);
  });
  if (perDevice.length === 1) return perDevice[0]!.map((e) => e.reading);
  // Merge by send time; ties keep device order, then each device's own order.
  const all = perDevice.flatMap((list, device) => list.map((e, seq) => ({ e, device, seq })));
  all.sort((a, b) => a.e.sentAt - b.e.sentAt || a.device - b.device || a.seq - b.seq);
  return all.map((x) => x.e.reading);
}
