import { RpmlabError } from "../core/errors.ts";
import { epochFromUtc, utcFields } from "../core/time.ts";

/**
 * GSS §3.70 Date Time (0x2A08), the time stamp layout shared by 2A35, 2A9D, 2A18, 2A5E and the
 * Current Time characteristic: year uint16 (1582–9999, 0 = unknown), month uint8 (1–12, 0 =
 * unknown), day uint8 (1–31, 0 = unknown), hours 0–23, minutes 0–59, seconds 0–59; 7 bytes.
 * It carries no time zone: a device's clock shows local time.
 */
export interface DateTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hours: number;
  readonly minutes: number;
  readonly seconds: number;
}

export const DATE_TIME_LENGTH = 7;

export interface DateTimeProblem {
  /** Part of the Date Time at fault, e.g. "month". */
  readonly part: keyof DateTime;
  /** Byte offset of that part inside the 7 bytes. */
  readonly offset: number;
  readonly message: string;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function inRange(v: number, min: number, max: number): boolean {
  return Number.isInteger(v) && v >= min && v <= max;
}

/** The first part of `dt` outside its GSS range, or undefined when every part is valid. */
export function dateTimeProblem(dt: DateTime): DateTimeProblem | undefined {
  if (!(dt.year === 0 || inRange(dt.year, 1582, 9999))) {
    return { part: "year", offset: 0, message: `year ${dt.year} is not 1582–9999 or 0 (unknown)` };
  }
  if (!inRange(dt.month, 0, 12)) {
    return { part: "month", offset: 2, message: `month ${dt.month} is not 1–12 or 0 (unknown)` };
  }
  if (!inRange(dt.day, 0, 31)) {
    return { part: "day", offset: 3, message: `day ${dt.day} is not 1–31 or 0 (unknown)` };
  }
  if (dt.month !== 0 && dt.day !== 0) {
    const last =
      dt.month === 2 && dt.year !== 0 && !isLeap(dt.year) ? 28 : DAYS_IN_MONTH[dt.month - 1]!;
    if (dt.day > last) {
      return {
        part: "day",
        offset: 3,
        message: `day ${dt.day} does not exist in month ${dt.month}`,
      };
    }
  }
  if (!inRange(dt.hours, 0, 23)) {
    return { part: "hours", offset: 4, message: `hours ${dt.hours} is not 0–23` };
  }
  if (!inRange(dt.minutes, 0, 59)) {
    return { part: "minutes", offset: 5, message: `minutes ${dt.minutes} is not 0–59` };
  }
  if (!inRange(dt.seconds, 0, 59)) {
    return { part: "seconds", offset: 6, message: `seconds ${dt.seconds} is not 0–59` };
  }
  return undefined;
}

/**
 * The Date Time showing epoch time `ms` (callers add the device's UTC offset first: a device
 * clock shows local time). Date Time has whole seconds, so `ms` must be a whole second.
 */
export function dateTimeFromEpochMs(ms: number, what: string, field: string): DateTime {
  if (!Number.isInteger(ms) || ms % 1000 !== 0) {
    throw new RpmlabError(
      "E_CODEC_RANGE",
      `${what}: ${field} ${ms} ms is not a whole second; Date Time carries whole seconds`,
      { field },
    );
  }
  const f = utcFields(ms);
  const dt: DateTime = {
    year: f.year,
    month: f.month,
    day: f.day,
    hours: f.hours,
    minutes: f.minutes,
    seconds: f.seconds,
  };
  if (dt.year < 1582 || dt.year > 9999) {
    throw new RpmlabError(
      "E_CODEC_RANGE",
      `${what}: ${field} falls in year ${dt.year}; Date Time holds 1582–9999`,
      { field },
    );
  }
  return dt;
}

/**
 * Epoch ms of a Date Time read as UTC; every part must be known (not 0). `offset`, the byte the
 * Date Time starts at in its value, lets the error name the byte of the unknown part.
 */
export function epochMsFromDateTime(
  dt: DateTime,
  what: string,
  field: string,
  offset?: number,
): number {
  const unknown = dt.year === 0 ? "year" : dt.month === 0 ? "month" : dt.day === 0 ? "day" : "";
  if (unknown !== "") {
    const message = `${unknown} is 0 (not known); a reading needs a full date`;
    if (offset === undefined) {
      throw new RpmlabError("E_CODEC_RANGE", `${what}: ${field}: ${message}`, { field });
    }
    const at = offset + PART_OFFSETS[unknown];
    throw new RpmlabError(
      "E_CODEC_RANGE",
      `${what}: ${field}.${unknown} at byte ${at}: ${message}`,
      {
        field: `${field}.${unknown}`,
        offset: at,
      },
    );
  }
  return epochFromUtc(dt);
}

/** Byte of each date part inside the 7 bytes (year is uint16 at 0). */
const PART_OFFSETS = { year: 0, month: 2, day: 3 } as const;
