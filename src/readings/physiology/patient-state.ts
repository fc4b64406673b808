import type { Rng } from "../../core/rng.ts";
import { MS_PER_DAY } from "../../core/time.ts";
import { fixedOffsetCalendar, type LocalCalendar, zoneCalendar } from "../local-calendar.ts";
import { minutesOfDay, type PatientModel } from "../patient-schema.ts";
import { bump, hoursSinceWake, morningness, morningSurge, sleepDepth } from "./circadian.ts";
import { at, dailySeries } from "./daily.ts";
import { EpisodeTrack, episodeEffect } from "./episodes.ts";

/** Glucose meter meal contexts (spec 2.8 glucometer filter param meal_context). */
export type MealContext = "fasting" | "pre-prandial" | "post-prandial";

/** Extra days drawn past the end, so jittered readings near the end still find a day's state. */
const SPARE_DAYS = 2;

/**
 * A patient's body over the generated period: the true (noise-free) value of every vital at any
 * instant. Reading noise is the device's business (capabilities add it from the device stream).
 *
 * Everything here is drawn from the patient's own forks ("physiology/…", "adherence") in day
 * order, never from a device's stream, so every device of the patient sees the same body and
 * adding a device changes nothing here.
 */
export class PatientState {
  /** Local days: the model's IANA zone with its daylight saving, or its fixed offset. */
  readonly calendar: LocalCalendar;
  readonly horizonDays: number;
  readonly episodes: readonly EpisodeTrack[];

  private readonly wakeHour: number;
  private readonly sleepHour: number;
  private readonly mealHours: readonly number[];
  private readonly bpDay: Float64Array;
  private readonly diaDay: Float64Array;
  private readonly hrDay: Float64Array;
  private readonly weightDay: Float64Array;
  private readonly spo2Day: Float64Array;
  private readonly piDay: Float64Array;
  private readonly glucoseDay: Float64Array;
  private readonly airflowDay: Float64Array;
  private readonly fetalDay: Float64Array;
  private readonly missed: Uint8Array;

  constructor(
    readonly model: PatientModel,
    rng: Rng,
    startMs: number,
    days: number,
  ) {
    this.calendar =
      model.time_zone === undefined
        ? fixedOffsetCalendar(model.timezone_offset, startMs)
        : zoneCalendar(model.time_zone, startMs, Math.ceil(days) + 1 + SPARE_DAYS);
    const n = Math.ceil((startMs - this.calendar.originMs) / MS_PER_DAY + days) + SPARE_DAYS;
    this.horizonDays = n;
    this.wakeHour = minutesOfDay(model.wake) / 60;
    this.sleepHour = minutesOfDay(model.sleep) / 60;
    const p = model.physiology;
    this.mealHours = p.glucose.meals.map((m) => minutesOfDay(m) / 60).sort((a, b) => a - b);

    const body = rng.fork("physiology");
    const bp = body.fork("blood_pressure");
    this.bpDay = dailySeries(bp, n, p.blood_pressure.day_sd, 0.6);
    // Diastolic follows systolic day to day (correlation about 0.7) at a smaller amplitude.
    const diaOwn = dailySeries(bp.fork("diastolic"), n, p.blood_pressure.day_sd * 0.45, 0.6);
    this.diaDay = this.bpDay.map((s, d) => s * 0.45 + diaOwn[d]!);
    this.hrDay = dailySeries(body.fork("heart_rate"), n, p.heart_rate.day_sd, 0.5);
    this.weightDay = dailySeries(body.fork("weight"), n, p.weight.day_sd, 0.7);
    this.spo2Day = dailySeries(body.fork("oxygen"), n, p.oxygen.day_sd, 0.6);
    this.piDay = dailySeries(body.fork("perfusion"), n, 0.2, 0.5);
    this.glucoseDay = dailySeries(body.fork("glucose"), n, p.glucose.day_sd, 0.5);
    this.airflowDay = dailySeries(body.fork("airflow"), n, p.respiratory.day_sd_fraction, 0.7);
    this.fetalDay = dailySeries(body.fork("fetal"), n, p.pregnancy?.day_sd ?? 0, 0.5);
    this.episodes = model.episodes.map(
      (e, i) => new EpisodeTrack(e, body.fork(`episode:${i}:${e.name}`), n),
    );

    const adherence = rng.fork("adherence");
    this.missed = new Uint8Array(n);
    for (let d = 0; d < n; d++) {
      this.missed[d] = adherence.chance(model.adherence.missed_day_rate) ? 1 : 0;
    }
  }

  /** Days (fractional) since the start of local day 0. */
  dayFloat(t: number): number {
    return this.calendar.day(t) + this.calendar.hour(t) / 24;
  }

  /** Local day index of an instant (day 0 holds the generation start). */
  day(t: number): number {
    return this.calendar.day(t);
  }

  /** Local hour of day, 0 to 24 (fractional). */
  hour(t: number): number {
    return this.calendar.hour(t);
  }

  /** UTC instant of a local time of day (minutes after midnight) on local day `day`. */
  instant(day: number, minutes: number): number {
    return this.calendar.instant(day, minutes);
  }

  /** The timezone_offset a device of the patient reports at `t` (whole hours). */
  offsetHours(t: number): number {
    return this.calendar.offsetHours(t);
  }

  /** True when the patient takes no reading at all that day (adherence.missed_day_rate). */
  missedDay(day: number): boolean {
    return day >= 0 && day < this.missed.length && this.missed[day] === 1;
  }

  /** 0 awake … 1 asleep. */
  sleepDepth(t: number): number {
    return sleepDepth(this.hour(t), this.sleepHour, this.wakeHour);
  }

  systolic(t: number): number {
    const bp = this.model.physiology.blood_pressure;
    const x = this.dayFloat(t);
    const h = this.hour(t);
    return (
      bp.systolic +
      at(this.bpDay, Math.floor(x)) -
      bp.nocturnal_dip * bp.systolic * sleepDepth(h, this.sleepHour, this.wakeHour) +
      bp.morning_surge * morningSurge(hoursSinceWake(h, this.wakeHour)) +
      episodeEffect(this.episodes, "systolic", x)
    );
  }

  diastolic(t: number): number {
    const bp = this.model.physiology.blood_pressure;
    const x = this.dayFloat(t);
    const h = this.hour(t);
    return (
      bp.diastolic +
      at(this.diaDay, Math.floor(x)) -
      bp.nocturnal_dip * bp.diastolic * sleepDepth(h, this.sleepHour, this.wakeHour) +
      0.5 * bp.morning_surge * morningSurge(hoursSinceWake(h, this.wakeHour)) +
      episodeEffect(this.episodes, "diastolic", x)
    );
  }

  heartRate(t: number): number {
    const hr = this.model.physiology.heart_rate;
    const x = this.dayFloat(t);
    const h = this.hour(t);
    return (
      hr.resting +
      at(this.hrDay, Math.floor(x)) -
      8 * sleepDepth(h, this.sleepHour, this.wakeHour) +
      4 * morningSurge(hoursSinceWake(h, this.wakeHour)) +
      episodeEffect(this.episodes, "heart_rate", x)
    );
  }

  /**
   * Body weight, lb: lowest on waking, about a pound more by evening (food and fluid), lost
   * again overnight. The overnight fall keeps the curve continuous at the wake hour, so a patient
   * weighed a few minutes before it (schedule jitter) is not a whole evening heavier.
   */
  weight(t: number): number {
    const w = this.model.physiology.weight;
    const x = this.dayFloat(t);
    const sinceWake = hoursSinceWake(this.hour(t), this.wakeHour);
    const awakeHours = hoursSinceWake(this.sleepHour, this.wakeHour);
    const awake =
      sinceWake <= awakeHours
        ? Math.min(1, sinceWake / 16)
        : (Math.min(1, awakeHours / 16) * (24 - sinceWake)) / (24 - awakeHours);
    return (
      w.baseline_lb +
      (w.trend_lb_per_week * x) / 7 +
      at(this.weightDay, Math.floor(x)) +
      1.2 * awake +
      episodeEffect(this.episodes, "weight_lb", x)
    );
  }

  spo2(t: number): number {
    const o = this.model.physiology.oxygen;
    const x = this.dayFloat(t);
    return (
      o.spo2 +
      at(this.spo2Day, Math.floor(x)) -
      1 * this.sleepDepth(t) +
      episodeEffect(this.episodes, "spo2", x)
    );
  }

  perfusionIndex(t: number): number {
    const o = this.model.physiology.oxygen;
    return o.perfusion_index * Math.exp(at(this.piDay, this.day(t)));
  }

  /** Blood glucose, mg/dL: fasting level plus the rise after each meal of the last 8 hours. */
  glucose(t: number): number {
    const g = this.model.physiology.glucose;
    const x = this.dayFloat(t);
    const h = this.hour(t);
    let meals = 0;
    for (const meal of this.mealHours) {
      const since = (h - meal + 24) % 24;
      if (since < 8) meals += bump(since, g.meal_peak_hours);
    }
    return (
      g.fasting_mg_dl +
      at(this.glucoseDay, Math.floor(x)) +
      g.meal_rise_mg_dl * meals +
      episodeEffect(this.episodes, "glucose_mg_dl", x)
    );
  }

  /** Meal context of a glucose reading: under 3 h after a meal, at least 8 h after one, between. */
  mealContext(t: number): MealContext {
    if (this.mealHours.length === 0) return "fasting";
    const h = this.hour(t);
    let since = 24;
    for (const meal of this.mealHours) since = Math.min(since, (h - meal + 24) % 24);
    return since < 3 ? "post-prandial" : since >= 8 ? "fasting" : "pre-prandial";
  }

  /** Factor on personal-best airflow: day variation, exacerbations, the morning dip. */
  airflowFactor(t: number): number {
    const r = this.model.physiology.respiratory;
    const x = this.dayFloat(t);
    const morning = Math.max(
      this.sleepDepth(t),
      morningness(hoursSinceWake(this.hour(t), this.wakeHour)),
    );
    return (
      (1 + at(this.airflowDay, Math.floor(x))) *
      (1 + episodeEffect(this.episodes, "airflow_fraction", x)) *
      (1 - r.morning_dip_fraction * morning)
    );
  }

  peakFlow(t: number): number {
    return this.model.physiology.respiratory.pef_l_min * this.airflowFactor(t);
  }

  fev1(t: number): number {
    return this.model.physiology.respiratory.fev1_l * this.airflowFactor(t);
  }

  /** Mean rescue inhaler uses on a day (more during exacerbations). */
  rescueRate(day: number): number {
    const r = this.model.physiology.respiratory.rescue_doses_per_day;
    return Math.max(0, r + episodeEffect(this.episodes, "rescue_doses_per_day", day + 0.5));
  }

  /** Mean fetal heart rate, or undefined when the patient is not pregnant. */
  fetalHeartRate(t: number): number | undefined {
    const p = this.model.physiology.pregnancy;
    return p === undefined ? undefined : p.fetal_heart_rate + at(this.fetalDay, this.day(t));
  }
}
