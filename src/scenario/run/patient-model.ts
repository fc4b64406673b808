import type { PatientModel } from "../../readings/patient-schema.ts";
import type { Cohort } from "../types.ts";

const MS_PER_HOUR = 3_600_000;

/** One per zone: a new DateTimeFormat costs 0.3–0.8 ms, and every patient of a cohort asks. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/**
 * The UTC offset of an IANA zone at an instant, in whole hours as devices report it
 * (wire-formats.md: timezone_offset is whole hours; daylight saving as it stands at `atMs`).
 */
export function zoneOffsetHours(zone: string, atMs: number): number {
  const parts = formatterOf(zone).formatToParts(new Date(atMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const local = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"));
  return Math.round((local - Math.floor(atMs / 60_000) * 60_000) / MS_PER_HOUR);
}

/**
 * Patient `index` of a cohort as the readings generator sees it: the cohort's model with the
 * patient's time zone (cohort zones in turn), and the cohort's adherence and schedule when it
 * sets them. Adherence is the share of scheduled readings taken: no missed days, the rest
 * skipped one by one.
 */
export function cohortPatientModel(
  model: PatientModel,
  cohort: Cohort,
  index: number,
  startMs: number,
): PatientModel {
  const zone = cohort.timeZones[index % Math.max(1, cohort.timeZones.length)];
  const schedule =
    cohort.schedule === undefined
      ? model.schedule
      : {
          ...model.schedule,
          ...Object.fromEntries(
            Object.entries(model.schedule)
              .filter(([family, times]) => Array.isArray(times) && family !== "inhaler_sensor")
              .map(([family]) => [family, [...cohort.schedule!]]),
          ),
        };
  return {
    ...model,
    timezone_offset: zone === undefined ? model.timezone_offset : zoneOffsetHours(zone, startMs),
    schedule,
    adherence:
      cohort.adherence === undefined
        ? model.adherence
        : {
            ...model.adherence,
            missed_day_rate: 0,
            skipped_reading_rate: Math.max(0, Math.min(1, 1 - cohort.adherence)),
          },
  };
}
