import { zoneOffsetHours } from "../../readings/local-calendar.ts";
import type { PatientModel } from "../../readings/patient-schema.ts";
import type { Cohort } from "../types.ts";

/**
 * Patient `index` of a cohort as the readings generator sees it: the cohort's model with the
 * patient's IANA time zone (cohort zones in turn; local-calendar.ts follows its daylight
 * saving), and the cohort's adherence and schedule when it sets them. Adherence is the share of scheduled readings taken: no missed days, the rest
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
    ...(zone === undefined
      ? {}
      : { timezone_offset: zoneOffsetHours(zone, startMs), time_zone: zone }),
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
