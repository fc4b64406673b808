import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { Profile } from "../../src/catalogue/schema.ts";
import { Rng } from "../../src/core/rng.ts";
import { MS_PER_HOUR } from "../../src/core/time.ts";
import { type GenerateOptions, generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import type { PatientModel } from "../../src/readings/patient-schema.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import type { MetricRecord } from "../../src/readings/types.ts";

export const catalogue = Catalogue.load();
export const patients = PatientModels.load();

export const profile = (name: string): Profile => catalogue.get(name);
export const model = (name: string): PatientModel => patients.get(name);

/** Readings of one or more devices for a model, seed and period (duplicates off unless asked). */
export function generate(
  devices: string | readonly string[],
  patient: string | PatientModel,
  options: Partial<Omit<GenerateOptions, "devices" | "patient" | "rng">> & {
    seed?: number | string;
  } = {},
): GeneratedReading[] {
  const { seed = 7, days = 28, ...rest } = options;
  return generateReadings({
    devices: (typeof devices === "string" ? [devices] : devices).map(profile),
    patient: typeof patient === "string" ? model(patient) : patient,
    rng: new Rng(seed),
    days,
    duplicateRate: 0,
    ...rest,
  });
}

/** Every record of the readings with its reading's timestamp, optionally of one metric. */
export function recordsOf(
  readings: readonly GeneratedReading[],
  metric?: string,
): Array<MetricRecord & { timestamp: number; device: string }> {
  return readings.flatMap((r) =>
    r.records
      .filter((rec) => metric === undefined || rec.metric === metric)
      .map((rec) => ({ ...rec, timestamp: r.timestamp, device: r.device })),
  );
}

export const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

/** Local hour (0–24) of an instant for a patient model's whole-hour offset. */
export function localHour(t: number, patient: PatientModel): number {
  const h = ((t + patient.timezone_offset * MS_PER_HOUR) / MS_PER_HOUR) % 24;
  return h < 0 ? h + 24 : h;
}

/** A copy of a shipped model with some fields replaced (for targeted physiology tests). */
export function variant(name: string, change: (m: PatientModel) => PatientModel): PatientModel {
  return change(structuredClone(model(name)));
}
