import { MS_PER_DAY, MS_PER_HOUR } from "../core/time.ts";

const MS_PER_MINUTE = 60_000;

/**
 * A patient's local days: which local day an instant falls on, its local hour, the instant of a
 * local time of day, and the UTC offset a device reports then. Day 0 is the local day holding
 * the start.
 */
export interface LocalCalendar {
  /** UTC instant of local midnight starting day 0. */
  readonly originMs: number;
  day(t: number): number;
  /** Local hour of day, 0 to 24 (fractional). */
  hour(t: number): number;
  /** UTC instant of a local time of day (minutes after midnight) on local day `day`. */
  instant(day: number, minutes: number): number;
  /** The device's timezone_offset at `t`: whole hours (wire-formats.md). */
  offsetHours(t: number): number;
}

/** True when the runtime knows `zone` as an IANA time zone (e.g. America/Chicago). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A fixed offset in whole hours all year (a patient model's own timezone_offset). */
export function fixedOffsetCalendar(offsetHours: number, startMs: number): LocalCalendar {
  const offsetMs = offsetHours * MS_PER_HOUR;
  const originMs = Math.floor((startMs + offsetMs) / MS_PER_DAY) * MS_PER_DAY - offsetMs;
  return {
    originMs,
    day: (t) => Math.floor((t - originMs) / MS_PER_DAY),
    hour: (t) => {
      const d = (t - originMs) / MS_PER_DAY;
      return (d - Math.floor(d)) * 24;
    },
    instant: (day, minutes) => originMs + day * MS_PER_DAY + minutes * MS_PER_MINUTE,
    offsetHours: () => offsetHours,
  };
}

/**
 * An IANA zone with its daylight saving: a reading scheduled at 07:30 is taken at 07:30 on the
 * wall clock on both sides of a change, and reports the offset of its own instant. A local time
 * the spring change skips is read with the offset before it (02:30 becomes 03:30); one the
 * autumn change repeats is taken once, at its first occurrence.
 *
 * `days` local days from the start's are worked out up front (each one's midnight and offset):
 * a day without a change then costs no time zone lookup.
 */
export function zoneCalendar(zone: string, startMs: number, days: number): LocalCalendar {
  const first = wallFields(zone, startMs);
  /** UTC ms of the wall clock at local midnight of day 0, as if the zone were UTC. */
  const wallOrigin = Date.UTC(first.year, first.month - 1, first.day);
  const midnights: number[] = [];
  const offsets: number[] = [];
  for (let d = 0; d <= days + 1; d++) {
    const at = wallToUtc(zone, wallOrigin + d * MS_PER_DAY);
    midnights.push(at);
    offsets.push(offsetMinutes(zone, at));
  }
  /**
   * The day's offset when it holds no change, else undefined. A change at local midnight
   * (America/Santiago, America/Havana, Asia/Beirut spring forward 00:00 to 01:00) leaves the day
   * starting at 01:00 with the new offset at both ends: its midnight, not on the wall clock at
   * that offset, marks it as holding the change.
   */
  const steadyOffset = (d: number) =>
    d >= 0 &&
    d + 1 < offsets.length &&
    offsets[d] === offsets[d + 1] &&
    midnights[d] === wallOrigin + d * MS_PER_DAY - offsets[d]! * MS_PER_MINUTE
      ? offsets[d]
      : undefined;
  const offsetAt = (t: number, d: number) => steadyOffset(d) ?? offsetMinutes(zone, t);
  const day = (t: number) => {
    let d = Math.floor((t - midnights[0]!) / MS_PER_DAY);
    if (d < 0 || d + 1 >= midnights.length) {
      return Math.floor((t + offsetMinutes(zone, t) * MS_PER_MINUTE - wallOrigin) / MS_PER_DAY);
    }
    while (d > 0 && t < midnights[d]!) d--;
    while (d + 1 < midnights.length && t >= midnights[d + 1]!) d++;
    return d;
  };
  return {
    originMs: midnights[0]!,
    day,
    hour: (t) => {
      const d = day(t);
      const wall = t + offsetAt(t, d) * MS_PER_MINUTE - (wallOrigin + d * MS_PER_DAY);
      return Math.min(24, Math.max(0, wall / MS_PER_HOUR));
    },
    instant: (d, minutes) => {
      const wall = wallOrigin + d * MS_PER_DAY + minutes * MS_PER_MINUTE;
      const steady = steadyOffset(d);
      return steady === undefined ? wallToUtc(zone, wall) : wall - steady * MS_PER_MINUTE;
    },
    offsetHours: (t) => wholeHours(offsetAt(t, day(t))),
  };
}

/**
 * The UTC offset of an IANA zone at an instant, in whole hours as devices report it
 * (wire-formats.md: timezone_offset is whole hours): the nearest hour, a half hour away from
 * zero (Asia/Kolkata +5:30 reports +6, America/St_Johns -3:30 reports -4).
 */
export function zoneOffsetHours(zone: string, atMs: number): number {
  return wholeHours(offsetMinutes(zone, atMs));
}

function wholeHours(minutes: number): number {
  return Math.sign(minutes) * Math.round(Math.abs(minutes) / 60) || 0;
}

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

function wallFields(zone: string, atMs: number) {
  const parts = formatterOf(zone).formatToParts(new Date(atMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return {
    year: get("year"),
    month: get("month"),
    day: get("day"),
    hour: get("hour"),
    minute: get("minute"),
  };
}

/** The zone's offset at an instant, minutes (zones' offsets are whole minutes). */
function offsetMinutes(zone: string, atMs: number): number {
  const f = wallFields(zone, atMs);
  const wall = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute);
  return Math.round((wall - Math.floor(atMs / MS_PER_MINUTE) * MS_PER_MINUTE) / MS_PER_MINUTE);
}

/**
 * The instant a wall clock in the zone shows `wall` (given as if the zone were UTC). The offsets a
 * day either side hold any change near `wall` between them (zones are UTC−12 to UTC+14): the one
 * before it is taken when it is valid (a time the autumn change repeats: its first occurrence) or
 * when neither is (a time the spring change skips: read with the offset before, an hour on). The
 * instant's own offset cannot tell before from after: east of UTC `wall` read as UTC already lies
 * past a change at local 01:00 (Europe/London), west of it not yet.
 */
function wallToUtc(zone: string, wall: number): number {
  const before = offsetMinutes(zone, wall - MS_PER_DAY);
  const after = offsetMinutes(zone, wall + MS_PER_DAY);
  if (before === after) return wall - before * MS_PER_MINUTE;
  const valid = (offset: number) => offsetMinutes(zone, wall - offset * MS_PER_MINUTE) === offset;
  if (valid(before) || !valid(after)) return wall - before * MS_PER_MINUTE;
  return wall - after * MS_PER_MINUTE;
}
