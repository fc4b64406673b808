import { z } from "zod";
import { isTimeZone } from "./local-calendar.ts";

/**
 * Schema of a patient physiology model (profiles/patients/*.yaml). A model says what a patient's
 * body does (blood pressure, weight, glucose, breathing, pregnancy), when the patient takes
 * readings with each kind of device, and how reliably. The reading generators read models only
 * through this schema; every number a generator uses to shape a patient's values lives here.
 */

/** Local time of day, "HH:MM" (24 h). */
export const timeOfDay = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a local time of day "HH:MM" (24-hour clock)');

const probability = z.number().min(0).max(1);
const nonNegative = z.number().nonnegative();
const positive = z.number().positive();
/** Inclusive [low, high] range a value is drawn from. */
const range = (item: z.ZodNumber) =>
  z
    .tuple([item, item])
    .refine(([low, high]) => low <= high, "range is [low, high] with low <= high");
/** Reading times of one device family; an empty list means the patient never uses it. */
const times = z.array(timeOfDay);

export const adherenceSchema = z.strictObject({
  /** Share of days on which the patient takes no reading at all with any device. */
  missed_day_rate: probability,
  /** Share of the remaining scheduled readings (and medication doses) skipped one by one. */
  skipped_reading_rate: probability,
  /** Standard deviation, in minutes, of actual reading times around the scheduled ones. */
  jitter_minutes: nonNegative,
});

/** Local times of day at which the patient uses each kind of device (spec 2.8 families). */
export const scheduleSchema = z.strictObject({
  scale: times,
  pulse_oximeter: times,
  blood_pressure_monitor: times,
  glucometer: times,
  peak_flow_meter: times,
  fetal_doppler: times,
  /** Controller (maintenance) doses; rescue doses come from physiology.respiratory. */
  inhaler_sensor: times,
  /** First dose of the day: the medication cap's fixed cycle (profile cadence) starts here. */
  medication_cap_sensor: timeOfDay,
});

export const bloodPressureSchema = z.strictObject({
  /** Daytime mean, mmHg. */
  systolic: positive,
  diastolic: positive,
  /** Day-to-day variation (standard deviation of a slowly varying daily offset), mmHg. */
  day_sd: nonNegative,
  /** Reading-to-reading variation, mmHg. */
  reading_sd: nonNegative,
  /** Extra systolic pressure at the morning surge's peak, about an hour after waking, mmHg. */
  morning_surge: nonNegative,
  /** Fraction by which pressure falls during sleep (0.10–0.20 is a normal "dipper"). */
  nocturnal_dip: z.number().min(0).max(0.5),
  /** Chance that a blood pressure reading detects an irregular heartbeat. */
  irregular_heartbeat_rate: probability,
});

export const heartRateSchema = z.strictObject({
  /** Resting daytime heart rate, beats per minute. */
  resting: positive,
  day_sd: nonNegative,
  reading_sd: nonNegative,
});

export const weightSchema = z.strictObject({
  baseline_lb: positive,
  /** Steady gain (positive) or loss (negative), pounds per week. */
  trend_lb_per_week: z.number(),
  /** Day-to-day variation around the trend, pounds. */
  day_sd: nonNegative,
  /** Scale-to-reading variation, pounds. */
  reading_sd: nonNegative,
});

export const oxygenSchema = z.strictObject({
  /** Mean oxygen saturation, %. */
  spo2: z.number().min(50).max(100),
  day_sd: nonNegative,
  reading_sd: nonNegative,
  /** Typical perfusion index at the fingertip, %. */
  perfusion_index: positive,
});

export const glucoseSchema = z.strictObject({
  fasting_mg_dl: positive,
  day_sd: nonNegative,
  /** Reading-to-reading variation as a fraction of the value (meters are about ±5 %). */
  reading_sd_fraction: nonNegative,
  /** Peak rise above fasting after a meal, mg/dL. */
  meal_rise_mg_dl: nonNegative,
  /** Hours from the start of a meal to the glucose peak. */
  meal_peak_hours: positive,
  /** Local meal times; they set meal_context and the post-prandial rise. */
  meals: times,
});

export const respiratorySchema = z.strictObject({
  /** Personal best-ish peak expiratory flow, L/min. */
  pef_l_min: positive,
  /** Forced expiratory volume in one second, L. */
  fev1_l: positive,
  day_sd_fraction: nonNegative,
  reading_sd_fraction: nonNegative,
  /** Fraction by which airflow is lower on waking than in the afternoon (morning dip). */
  morning_dip_fraction: z.number().min(0).max(0.5),
  /** Mean rescue (as-needed) inhaler uses per day, on top of the controller schedule. */
  rescue_doses_per_day: nonNegative,
  /** Typical peak inspiratory flow through an inhaler, L/min. */
  inspiratory_flow_l_min: positive,
});

export const pregnancySchema = z.strictObject({
  gestational_week: z.number().int().min(4).max(42),
  /** Mean fetal heart rate, beats per minute (normal 110–160). */
  fetal_heart_rate: positive,
  day_sd: nonNegative,
  reading_sd: nonNegative,
  /** Share of fetal doppler readings that fail (an invalid_event instead of a fetal_pulse). */
  invalid_rate: probability,
});

/**
 * A recurring worsening: heart failure fluid gain, a COPD exacerbation, a run of hyperglycaemia.
 * Each episode ramps up over onset_days, holds for plateau_days and resolves over recovery_days;
 * its effects are the changes at full intensity, scaled by a severity drawn per episode.
 */
export const episodeSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_]*$/),
  /** Days between the starts of consecutive episodes. */
  every_days: range(positive),
  onset_days: range(positive),
  plateau_days: range(nonNegative),
  recovery_days: range(positive),
  severity: range(z.number().min(0).max(1)),
  effects: z
    .strictObject({
      weight_lb: z.number(),
      systolic: z.number(),
      diastolic: z.number(),
      heart_rate: z.number(),
      spo2: z.number(),
      /** Relative change of peak flow and FEV1, e.g. -0.3 for a 30 % drop. */
      airflow_fraction: z.number().min(-0.9).max(1),
      glucose_mg_dl: z.number(),
      rescue_doses_per_day: z.number(),
    })
    .partial(),
});
export type EpisodeModel = z.infer<typeof episodeSchema>;
export type EpisodeEffect = keyof EpisodeModel["effects"];

export const patientModelSchema = z.strictObject({
  /** Name used on the command line (`--patient heart-failure`). */
  name: z.string().regex(/^[a-z][a-z0-9-]*$/, "lower-case letters, digits and hyphens"),
  description: z.string().min(1),
  /**
   * Whole hours (wire-formats.md: timezone_offset is whole hours), all year; superseded by
   * time_zone when it is set.
   */
  timezone_offset: z.number().int().min(-12).max(14),
  /**
   * An IANA zone (scenarios give cohorts theirs): local times follow its daylight saving, and
   * timezone_offset is its offset at each reading, to the nearest whole hour.
   */
  time_zone: z
    .string()
    .refine(isTimeZone, "not an IANA time zone, e.g. America/New_York")
    .optional(),
  wake: timeOfDay,
  sleep: timeOfDay,
  adherence: adherenceSchema,
  schedule: scheduleSchema,
  physiology: z.strictObject({
    blood_pressure: bloodPressureSchema,
    heart_rate: heartRateSchema,
    weight: weightSchema,
    oxygen: oxygenSchema,
    glucose: glucoseSchema,
    respiratory: respiratorySchema,
    /** Absent when the patient is not pregnant: a fetal doppler then finds no heartbeat. */
    pregnancy: pregnancySchema.optional(),
  }),
  episodes: z.array(episodeSchema).default([]),
});

export type PatientModel = z.infer<typeof patientModelSchema>;
export type PatientSchedule = PatientModel["schedule"];

/** Minutes after local midnight of an "HH:MM" time (already validated by the schema). */
export function minutesOfDay(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}
