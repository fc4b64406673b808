import type { Profile, ProfileFamily } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { MS_PER_HOUR, MS_PER_MINUTE } from "../core/time.ts";
import type { Occasion } from "./capabilities/capability.ts";
import { minutesOfDay } from "./patient-schema.ts";
import type { PatientState } from "./physiology/patient-state.ts";

/** The generated period: [start, end) in ms since the epoch, UTC. */
export interface Window {
  readonly start: number;
  readonly end: number;
}

/** Families whose readings follow a list of times of day in the patient model. */
type ListedFamily = Exclude<ProfileFamily, "medication_cap_sensor" | "proximity_band">;

/** Real devices report minutes (wire-formats.md): the device clock drops seconds. */
export function toMinute(t: number): number {
  return Math.floor(t / MS_PER_MINUTE) * MS_PER_MINUTE;
}

function isListed(family: ProfileFamily): family is ListedFamily {
  return family !== "medication_cap_sensor" && family !== "proximity_band";
}

/**
 * When the patient uses a device of `family`: the model's times of day, except on missed days
 * (shared by every device of the patient) and skipped readings, moved by jitter. Drawn from the
 * stream "schedule:<family>", so any device of the family, or a device accompanying it (proximity
 * band), sees the same times; days are drawn in order, so a longer run extends a shorter one.
 */
export function scheduledTimes(
  family: ListedFamily,
  patient: PatientState,
  root: Rng,
  window: Window,
): number[] {
  const rng = root.fork(`schedule:${family}`);
  const slots = patient.model.schedule[family].map(minutesOfDay);
  const { skipped_reading_rate: skipRate, jitter_minutes: jitter } = patient.model.adherence;
  const lastDay = patient.day(window.end) + 1;
  const out: number[] = [];
  for (let day = 0; day <= lastDay; day++) {
    if (patient.missedDay(day)) continue;
    for (const minutes of slots) {
      const skipped = rng.chance(skipRate);
      const shift = rng.normal(0, jitter);
      if (skipped) continue;
      const t = toMinute(patient.instant(day, minutes + shift));
      if (t >= window.start && t < window.end) out.push(t);
    }
  }
  return out.sort((a, b) => a - b);
}

/** As-needed inhaler uses: a Poisson number per day (more during exacerbations), while awake. */
function rescueTimes(patient: PatientState, root: Rng, window: Window): number[] {
  const rng = root.fork("schedule:inhaler_sensor:rescue");
  const wake = minutesOfDay(patient.model.wake);
  const awakeMinutes = (minutesOfDay(patient.model.sleep) - wake + 1440) % 1440;
  const lastDay = patient.day(window.end);
  const out: number[] = [];
  for (let day = 0; day <= lastDay; day++) {
    const uses = rng.poisson(patient.rescueRate(day));
    for (let i = 0; i < uses; i++) {
      const t = toMinute(patient.instant(day, wake + rng.uniform(0, awakeMinutes)));
      if (t >= window.start && t < window.end) out.push(t);
    }
  }
  return out;
}

/**
 * Fixed cycles of an interval device (medication cap, spec 2.8 "sends once every 12 hours"):
 * starting at the model's first dose time, each cycle opens with a sync and closes a few minutes
 * later.
 */
function cycles(everyHours: number, patient: PatientState, root: Rng, window: Window): Occasion[] {
  const rng = root.fork("schedule:medication_cap_sensor");
  const period = everyHours * MS_PER_HOUR;
  let t = patient.instant(0, minutesOfDay(patient.model.schedule.medication_cap_sensor));
  while (t - period >= window.start) t -= period;
  const out: Occasion[] = [];
  for (; t < window.end; t += period) {
    const end = t + rng.int(1, 4) * MS_PER_MINUTE;
    if (t < window.start) continue;
    out.push({ t, kind: "cycle_start" });
    if (end < window.end) out.push({ t: end, kind: "cycle_end" });
  }
  return out;
}

/**
 * Every occasion on which a device of this profile takes a reading, in time order, from its
 * cadence (spec 2.8): per reading (patient schedule, plus rescue doses for inhalers), on an
 * interval, or alongside a companion device's readings.
 */
export function occasions(
  profile: Profile,
  patient: PatientState,
  root: Rng,
  window: Window,
  companion: ProfileFamily,
): Occasion[] {
  const cadence = profile.cadence;
  if (cadence.kind === "interval") return cycles(cadence.every_hours, patient, root, window);
  if (cadence.kind === "with_other_device") {
    if (!isListed(companion)) {
      throw new RpmlabError("E_USAGE", `a ${companion} cannot accompany ${profile.name}`, {
        field: "companion",
      });
    }
    return scheduledTimes(companion, patient, root, window).map((t) => ({ t, kind: "companion" }));
  }
  if (!isListed(profile.family)) {
    throw new RpmlabError(
      "E_PROFILE_INVALID",
      `${profile.name}: a ${profile.family} has no times of day in the patient model; give it an interval or with_other_device cadence`,
      { field: "cadence" },
    );
  }
  const scheduled: Occasion[] = scheduledTimes(profile.family, patient, root, window).map((t) => ({
    t,
    kind: "scheduled",
  }));
  if (profile.family !== "inhaler_sensor") return scheduled;
  const rescue: Occasion[] = rescueTimes(patient, root, window).map((t) => ({ t, kind: "rescue" }));
  return [...scheduled, ...rescue].sort((a, b) => a.t - b.t);
}
