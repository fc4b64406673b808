/**
 * Local days of a patient in an IANA zone: wall-clock schedules across daylight saving changes,
 * and the whole-hour timezone_offset devices report (wire-formats.md).
 */
import { describe, expect, it } from "vitest";
import {
  fixedOffsetCalendar,
  zoneCalendar,
  zoneOffsetHours,
} from "../../src/readings/local-calendar.ts";
import { generate, model } from "./helpers.ts";

const NY = "America/New_York";
/** Local wall time of an instant in a zone, "HH:MM". */
const wall = (zone: string, t: number) =>
  new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).format(new Date(t));
const iso = (t: number) => new Date(t).toISOString();

describe("a zone's calendar", () => {
  it("keeps 07:30 on the wall clock across both of New York's changes, with the offset of each instant", () => {
    const spring = zoneCalendar(NY, Date.UTC(2026, 2, 6, 12), 5);
    // Days 0–4: 6 to 10 March; the change is on the 8th at 02:00.
    const mornings = [0, 1, 2, 3, 4].map((d) => spring.instant(d, 7 * 60 + 30));
    expect(mornings.map((t) => wall(NY, t))).toEqual(Array(5).fill("07:30"));
    expect(mornings.map((t) => spring.offsetHours(t))).toEqual([-5, -5, -4, -4, -4]);
    expect(mornings.map((t) => spring.day(t))).toEqual([0, 1, 2, 3, 4]);
    expect(mornings.map((t) => spring.hour(t))).toEqual(Array(5).fill(7.5));
    const autumn = zoneCalendar(NY, Date.UTC(2026, 9, 31, 12), 3);
    const evenings = [0, 1, 2].map((d) => autumn.instant(d, 20 * 60));
    expect(evenings.map((t) => wall(NY, t))).toEqual(["20:00", "20:00", "20:00"]);
    expect(evenings.map((t) => autumn.offsetHours(t))).toEqual([-4, -5, -5]);
  });

  it("reads a skipped local time an hour on, and takes a repeated one at its first occurrence", () => {
    const calendar = zoneCalendar(NY, Date.UTC(2026, 2, 8, 12), 1);
    expect(iso(calendar.instant(0, 2 * 60 + 30))).toBe("2026-03-08T07:30:00.000Z"); // 03:30 EDT
    const autumn = zoneCalendar(NY, Date.UTC(2026, 10, 1, 12), 1);
    expect(iso(autumn.instant(0, 60 + 30))).toBe("2026-11-01T05:30:00.000Z"); // 01:30 EDT
    // A day of 23 hours: midnight to midnight.
    expect(calendar.day(Date.UTC(2026, 2, 9, 3, 59))).toBe(0);
    expect(calendar.day(Date.UTC(2026, 2, 9, 4, 0))).toBe(1);
  });

  it("reads a time a midnight spring change skips an hour on, on its own day (Santiago, Havana)", () => {
    // Chile springs forward at 00:00 (to 01:00) on 6 September 2026, Cuba on 8 March 2026: the
    // day starts at 01:00, and 00:30 read an hour on is 01:30 that day, not 23:30 the day before.
    const santiago = zoneCalendar("America/Santiago", Date.UTC(2026, 8, 5, 12), 2);
    expect(iso(santiago.instant(1, 30))).toBe("2026-09-06T04:30:00.000Z"); // 01:30 -03
    expect(santiago.day(santiago.instant(1, 30))).toBe(1);
    expect(santiago.instant(1, 0)).toBe(santiago.instant(1, 60)); // midnight: the change itself
    const havana = zoneCalendar("America/Havana", Date.UTC(2026, 2, 7, 12), 2);
    expect(iso(havana.instant(1, 15))).toBe("2026-03-08T05:15:00.000Z"); // 01:15 CDT
    expect(havana.day(havana.instant(1, 15))).toBe(1);
  });

  it("schedules half-hour zones at their true local time; their offset is the nearest whole hour, a half away from zero", () => {
    const kolkata = zoneCalendar("Asia/Kolkata", Date.UTC(2026, 0, 10), 2);
    expect(iso(kolkata.instant(0, 8 * 60))).toBe("2026-01-10T02:30:00.000Z");
    expect(kolkata.offsetHours(kolkata.instant(0, 8 * 60))).toBe(6);
    expect(zoneOffsetHours("America/St_Johns", Date.UTC(2026, 0, 10))).toBe(-4); // -3:30
    expect(zoneOffsetHours("America/St_Johns", Date.UTC(2026, 6, 10))).toBe(-3); // -2:30
    expect(zoneOffsetHours("Australia/Lord_Howe", Date.UTC(2026, 0, 10))).toBe(11); // +11
    expect(zoneOffsetHours("Australia/Lord_Howe", Date.UTC(2026, 6, 10))).toBe(11); // +10:30
    expect(zoneOffsetHours("Asia/Kathmandu", Date.UTC(2026, 0, 10))).toBe(6); // +5:45
    expect(zoneOffsetHours("UTC", Date.UTC(2026, 0, 10))).toBe(0);
  });

  it("a fixed offset is the same all year", () => {
    const calendar = fixedOffsetCalendar(-5, Date.UTC(2026, 2, 6, 12));
    expect(iso(calendar.instant(2, 7 * 60 + 30))).toBe("2026-03-08T12:30:00.000Z");
    expect(calendar.offsetHours(Date.UTC(2026, 6, 1))).toBe(-5);
  });
});

describe("readings of a patient in an IANA zone", () => {
  it("are taken at the same local time before and after a change, and report the offset then", () => {
    const patient = { ...model("hypertensive"), time_zone: NY, timezone_offset: -5 };
    const readings = generate("Vendor Scale", patient, {
      start: Date.UTC(2026, 1, 22),
      days: 28,
    });
    const minutes = (t: number) => {
      const [h, m] = wall(NY, t).split(":").map(Number);
      return h! * 60 + m!;
    };
    const change = Date.UTC(2026, 2, 8, 7);
    const before = readings.filter((r) => r.timestamp < change);
    const after = readings.filter((r) => r.timestamp >= change);
    expect(before.length).toBeGreaterThan(5);
    expect(after.length).toBeGreaterThan(5);
    expect(new Set(before.map((r) => r.timezone_offset))).toEqual(new Set([-5]));
    expect(new Set(after.map((r) => r.timezone_offset))).toEqual(new Set([-4]));
    const mean = (rs: typeof readings) =>
      rs.reduce((n, r) => n + minutes(r.timestamp), 0) / rs.length;
    // The same schedule on the wall clock (the reading times jitter around it): not an hour late.
    expect(Math.abs(mean(after) - mean(before))).toBeLessThan(20);
  });
});

describe("daylight saving days in America/Chicago and Europe/London", () => {
  /** The change of each zone in 2026: its day, and the local time it skips (spring) or repeats (autumn). */
  const changes = [
    {
      zone: "America/Chicago",
      spring: Date.UTC(2026, 2, 8),
      autumn: Date.UTC(2026, 10, 1),
      gap: "02:30",
      repeat: "01:30",
      winter: "-6",
      summer: "-5",
    },
    {
      zone: "Europe/London",
      spring: Date.UTC(2026, 2, 29),
      autumn: Date.UTC(2026, 9, 25),
      gap: "01:30",
      repeat: "01:30",
      winter: "+0",
      summer: "+1",
    },
  ];
  /** A patient in the zone who reads the cuff at `times` every day, on the minute. */
  const punctual = (zone: string, times: string[]) => {
    const m = structuredClone(model("normal"));
    return {
      ...m,
      time_zone: zone,
      adherence: { missed_day_rate: 0, skipped_reading_rate: 0, jitter_minutes: 0 },
      schedule: { ...m.schedule, blood_pressure_monitor: times },
    };
  };
  const localDay = (zone: string, t: number) =>
    new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(new Date(t));
  /** Wall times (and offsets) of the readings on each whole local day around `day`. */
  const byLocalDay = (zone: string, times: string[], day: number) => {
    const readings = generate("Vendor BPM - S", punctual(zone, times), {
      start: day - 2 * 86_400_000 + 12 * 3_600_000,
      days: 4,
    });
    const out = new Map<string, string[]>();
    for (const r of readings) {
      const key = localDay(zone, r.timestamp);
      out.set(key, [
        ...(out.get(key) ?? []),
        `${wall(zone, r.timestamp)}${r.timezone_offset >= 0 ? "+" : ""}${r.timezone_offset}`,
      ]);
    }
    // The day before, the day of the change and the day after: whole days inside the window.
    const around = [-1, 0, 1].map((d) => localDay(zone, day + d * 86_400_000 + 12 * 3_600_000));
    return around.map((key) => [key, out.get(key) ?? []] as const);
  };

  it.each(changes)(
    "$zone: the skipped time is read an hour on, once, and no other reading moves",
    ({ zone, spring, gap, winter, summer }) => {
      const days = byLocalDay(zone, ["00:15", gap, "07:30"], spring);
      const change = localDay(zone, spring + 12 * 3_600_000);
      const [h, m] = gap.split(":").map(Number);
      const later = `${String(h! + 1).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
      expect(new Map(days).get(change)).toEqual([
        `00:15${winter}`,
        `${later}${summer}`,
        `07:30${summer}`,
      ]);
      for (const [day, times] of days) expect(times, day).toHaveLength(3);
    },
  );

  it.each(changes)(
    "$zone: the repeated time is read once, at its first occurrence",
    ({ zone, autumn, repeat, winter, summer }) => {
      const days = byLocalDay(zone, ["00:15", repeat, "07:30"], autumn);
      const change = localDay(zone, autumn + 12 * 3_600_000);
      expect(new Map(days).get(change)).toEqual([
        `00:15${summer}`,
        `${repeat}${summer}`,
        `07:30${winter}`,
      ]);
      for (const [day, times] of days) expect(times, day).toHaveLength(3);
    },
  );
});
