/**
 * Pure UTC calendar arithmetic on epoch milliseconds. Used instead of `new Date()` so nothing
 * outside src/core touches the wall clock, and so conversions are exact and allocation-free.
 */

export interface UtcFields {
  year: number;
  /** 1–12 */
  month: number;
  /** 1–31 */
  day: number;
  hours: number;
  minutes: number;
  seconds: number;
  milliseconds: number;
}

export const MS_PER_MINUTE = 60_000;
export const MS_PER_HOUR = 3_600_000;
export const MS_PER_DAY = 86_400_000;

/** Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The civil date of a day count since 1970-01-01 (civil_from_days). */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

export function utcFields(ms: number): UtcFields {
  const days = Math.floor(ms / MS_PER_DAY);
  let rest = ms - days * MS_PER_DAY;
  const { year, month, day } = civilFromDays(days);
  const hours = Math.floor(rest / MS_PER_HOUR);
  rest -= hours * MS_PER_HOUR;
  const minutes = Math.floor(rest / MS_PER_MINUTE);
  rest -= minutes * MS_PER_MINUTE;
  const seconds = Math.floor(rest / 1000);
  return { year, month, day, hours, minutes, seconds, milliseconds: rest - seconds * 1000 };
}

export function epochFromUtc(
  fields: Omit<UtcFields, "milliseconds"> & { milliseconds?: number },
): number {
  return (
    daysFromCivil(fields.year, fields.month, fields.day) * MS_PER_DAY +
    fields.hours * MS_PER_HOUR +
    fields.minutes * MS_PER_MINUTE +
    fields.seconds * 1000 +
    (fields.milliseconds ?? 0)
  );
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * ISO 8601 UTC with microseconds and a Z, as the service renders timestamps
 * (wire-formats.md: "2024-10-16T04:10:00.000000Z").
 */
export function toIsoMicros(ms: number): string {
  // A virtual clock can stand between milliseconds (BLE timing: 1.25 ms connection intervals).
  // The microseconds from the fraction alone: ms × 1000 passes 2^53 after the year 2255, and
  // its last digits would be made up.
  const whole = Math.floor(ms);
  const sub = Math.floor((ms - whole) * 1000);
  const f = utcFields(whole);
  return `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}T${pad(f.hours)}:${pad(f.minutes)}:${pad(f.seconds)}.${pad(f.milliseconds, 3)}${pad(sub, 3)}Z`;
}

/**
 * 0001-01-01T00:00:00Z: the first instant Python's datetime holds (the real service is Django),
 * and the first four-digit ISO 8601 writes without the year 0000 no calendar of its has.
 */
export const YEAR_1_MS = -62_135_596_800_000;

/** 10000-01-01T00:00:00Z: the first instant ISO 8601's four-digit years cannot write. */
export const PAST_YEAR_9999_MS = 253_402_300_800_000;

const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Parses an ISO 8601 date or date-time (offset optional, UTC assumed without one; ±hh, ±hhmm or
 * ±hh:mm, under 24 hours as Python's and Django's parsers take it) to epoch ms; undefined when
 * the text is not such a date, names an impossible calendar day, or an impossible offset.
 */
export function parseIso(text: string): number | undefined {
  const m = ISO_PATTERN.exec(text.trim());
  if (m === null) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hours, minutes, seconds] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  if (month < 1 || month > 12 || hours > 23 || minutes > 59 || seconds > 59) return undefined;
  const probe = civilFromDays(daysFromCivil(year, month, day));
  if (probe.month !== month || probe.day !== day) return undefined;
  const milliseconds = Math.floor(Number(`0.${m[7] ?? "0"}`) * 1000);
  let ms = epochFromUtc({ year, month, day, hours, minutes, seconds, milliseconds });
  const zone = m[8];
  if (zone !== undefined && zone !== "Z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const [offsetHours, offsetMinutes] = [Number(digits.slice(0, 2)), Number(digits.slice(2))];
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    ms -= sign * (offsetHours * MS_PER_HOUR + offsetMinutes * MS_PER_MINUTE);
  }
  return ms;
}
