import { CodeTable, rejectReserved } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import type { Medfloat } from "../medfloat.ts";

/**
 * GSS Glucose Measurement Context (0x2A34), sent after a Glucose Measurement whose flags bit 4 is
 * set, with the same sequence number:
 *
 * | field                                        | size | present     |
 * |----------------------------------------------|------|-------------|
 * | Flags                                        | 1    | always      |
 * | Sequence Number (uint16)                     | 2    | always      |
 * | Extended Flags (all bits RFU)                | 1    | flags bit 7 |
 * | Carbohydrate ID (uint8) + Carbohydrate (SFLOAT, kg) | 3 | flags bit 0 |
 * | Meal (uint8)                                 | 1    | flags bit 1 |
 * | Tester (low nibble) - Health (high nibble)   | 1    | flags bit 2 |
 * | Exercise Duration (uint16 s) + Intensity (uint8 %) | 3 | flags bit 3 |
 * | Medication ID (uint8) + Medication (SFLOAT, kg or L) | 3 | flags bit 4 |
 * | HbA1c (SFLOAT, %)                            | 2    | flags bit 6 |
 *
 * Flags bit 5: medication units, 0 = kilograms, 1 = liters (meaningful only with bit 4).
 */

const FLAG_CARBOHYDRATE = 0x01;
const FLAG_MEAL = 0x02;
const FLAG_TESTER_HEALTH = 0x04;
const FLAG_EXERCISE = 0x08;
const FLAG_MEDICATION = 0x10;
const FLAG_MEDICATION_LITERS = 0x20;
const FLAG_HBA1C = 0x40;
const FLAG_EXTENDED = 0x80;

export const GLUCOSE_CONTEXT_MAX_LENGTH = 1 + 2 + 1 + 3 + 1 + 1 + 3 + 3 + 2;

export const CARBOHYDRATES = new CodeTable({
  breakfast: 1,
  lunch: 2,
  dinner: 3,
  snack: 4,
  drink: 5,
  supper: 6,
  brunch: 7,
});
export const MEALS = new CodeTable({
  preprandial: 1,
  postprandial: 2,
  fasting: 3,
  casual: 4,
  bedtime: 5,
});
export const TESTERS = new CodeTable({
  self: 1,
  health_care_professional: 2,
  lab_test: 3,
  not_available: 15,
});
export const HEALTH = new CodeTable({
  minor_health_issues: 1,
  major_health_issues: 2,
  during_menses: 3,
  under_stress: 4,
  no_health_issues: 5,
  not_available: 15,
});
export const MEDICATIONS = new CodeTable({
  rapid_acting_insulin: 1,
  short_acting_insulin: 2,
  intermediate_acting_insulin: 3,
  long_acting_insulin: 4,
  pre_mixed_insulin: 5,
});

export type Meal = keyof typeof MEALS.codes;

export interface GlucoseMeasurementContext {
  readonly sequenceNumber: number;
  readonly carbohydrate?: { readonly id: keyof typeof CARBOHYDRATES.codes; readonly kg: Medfloat };
  readonly meal?: Meal | undefined;
  readonly testerHealth?: {
    readonly tester: keyof typeof TESTERS.codes;
    readonly health: keyof typeof HEALTH.codes;
  };
  /** Duration in seconds (65535 = overrun) and intensity in percent (0–100). */
  readonly exercise?: { readonly durationSeconds: number; readonly intensityPercent: number };
  readonly medication?: {
    readonly id: keyof typeof MEDICATIONS.codes;
    readonly value: Medfloat;
    readonly unit: "kg" | "L";
  };
  readonly hba1cPercent?: Medfloat | undefined;
}

const NAME = "Glucose Measurement Context";
const writer = new ByteWriter(GLUCOSE_CONTEXT_MAX_LENGTH, NAME);

export function encodeGlucoseMeasurementContext(c: GlucoseMeasurementContext): Uint8Array {
  const w = writer.start();
  let flags = 0;
  if (c.carbohydrate !== undefined) flags |= FLAG_CARBOHYDRATE;
  if (c.meal !== undefined) flags |= FLAG_MEAL;
  if (c.testerHealth !== undefined) flags |= FLAG_TESTER_HEALTH;
  if (c.exercise !== undefined) flags |= FLAG_EXERCISE;
  if (c.medication !== undefined) {
    if (c.medication.unit !== "kg" && c.medication.unit !== "L") {
      throw w.fail(
        "E_CODEC_RANGE",
        "medication.unit",
        `"${String(c.medication.unit)}" is not kg or L`,
      );
    }
    flags |= c.medication.unit === "L" ? FLAG_MEDICATION | FLAG_MEDICATION_LITERS : FLAG_MEDICATION;
  }
  if (c.hba1cPercent !== undefined) flags |= FLAG_HBA1C;
  w.u8(flags, "flags");
  w.u16(c.sequenceNumber, "sequence_number");
  if (c.carbohydrate !== undefined) {
    w.u8(CARBOHYDRATES.code(w, c.carbohydrate.id, "carbohydrate_id"), "carbohydrate_id");
    w.sfloat(c.carbohydrate.kg, "carbohydrate", -3);
  }
  if (c.meal !== undefined) w.u8(MEALS.code(w, c.meal, "meal"), "meal");
  if (c.testerHealth !== undefined) {
    const tester = TESTERS.code(w, c.testerHealth.tester, "tester");
    const health = HEALTH.code(w, c.testerHealth.health, "health");
    w.u8(tester | (health << 4), "tester_health");
  }
  if (c.exercise !== undefined) {
    w.u16(c.exercise.durationSeconds, "exercise_duration");
    if (c.exercise.intensityPercent > 100) {
      throw w.fail(
        "E_CODEC_RANGE",
        "exercise_intensity",
        `${c.exercise.intensityPercent} is over 100 %`,
      );
    }
    w.u8(c.exercise.intensityPercent, "exercise_intensity");
  }
  if (c.medication !== undefined) {
    w.u8(MEDICATIONS.code(w, c.medication.id, "medication_id"), "medication_id");
    w.sfloat(c.medication.value, "medication", c.medication.unit === "L" ? -3 : -6);
  }
  if (c.hba1cPercent !== undefined) w.sfloat(c.hba1cPercent, "hba1c", -1);
  return w.finish();
}

export function decodeGlucoseMeasurementContext(bytes: Uint8Array): GlucoseMeasurementContext {
  const r = new ByteReader(bytes, NAME);
  const flags = r.u8("flags");
  if (flags & FLAG_MEDICATION_LITERS && !(flags & FLAG_MEDICATION)) {
    throw r.fail("E_CODEC_FLAGS", "flags", 0, "units bit 5 is set without a medication (bit 4)");
  }
  const sequenceNumber = r.u16("sequence_number");
  if (flags & FLAG_EXTENDED) {
    const at = r.offset;
    rejectReserved(r, r.u8("extended_flags"), 0, "extended_flags", at);
  }
  let carbohydrate: GlucoseMeasurementContext["carbohydrate"];
  if (flags & FLAG_CARBOHYDRATE) {
    const at = r.offset;
    const id = CARBOHYDRATES.name(r, r.u8("carbohydrate_id"), "carbohydrate_id", at);
    carbohydrate = { id, kg: r.sfloat("carbohydrate") };
  }
  let meal: Meal | undefined;
  if (flags & FLAG_MEAL) {
    const at = r.offset;
    meal = MEALS.name(r, r.u8("meal"), "meal", at);
  }
  let testerHealth: GlucoseMeasurementContext["testerHealth"];
  if (flags & FLAG_TESTER_HEALTH) {
    const at = r.offset;
    const raw = r.u8("tester_health");
    testerHealth = {
      tester: TESTERS.name(r, raw & 0x0f, "tester", at),
      health: HEALTH.name(r, raw >>> 4, "health", at),
    };
  }
  let exercise: GlucoseMeasurementContext["exercise"];
  if (flags & FLAG_EXERCISE) {
    const durationSeconds = r.u16("exercise_duration");
    const at = r.offset;
    const intensityPercent = r.u8("exercise_intensity");
    if (intensityPercent > 100) {
      throw r.fail("E_CODEC_RANGE", "exercise_intensity", at, `${intensityPercent} is over 100 %`);
    }
    exercise = { durationSeconds, intensityPercent };
  }
  let medication: GlucoseMeasurementContext["medication"];
  if (flags & FLAG_MEDICATION) {
    const at = r.offset;
    const id = MEDICATIONS.name(r, r.u8("medication_id"), "medication_id", at);
    medication = {
      id,
      value: r.sfloat("medication"),
      unit: flags & FLAG_MEDICATION_LITERS ? "L" : "kg",
    };
  }
  const hba1cPercent = flags & FLAG_HBA1C ? r.sfloat("hba1c") : undefined;
  r.end();
  return { sequenceNumber, carbohydrate, meal, testerHealth, exercise, medication, hba1cPercent };
}
