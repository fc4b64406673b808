import { describe, expect, it } from "vitest";
import {
  epochFromUtc,
  PAST_YEAR_9999_MS,
  parseIso,
  toIsoMicros,
  utcFields,
} from "../../src/core/time.ts";

describe("UTC time helpers", () => {
  it("renders timestamps as the service does, with microseconds and Z", () => {
    expect(toIsoMicros(Date.UTC(2024, 9, 16, 4, 10, 28, 109))).toBe("2024-10-16T04:10:28.109000Z");
    expect(toIsoMicros(0)).toBe("1970-01-01T00:00:00.000000Z");
    // Past the year 2255, ms × 1000 is beyond 2^53: no made-up microseconds.
    expect(toIsoMicros(PAST_YEAR_9999_MS - 1)).toBe("9999-12-31T23:59:59.999000Z");
  });

  it("renders an instant between milliseconds (a virtual clock on BLE timing) to the microsecond", () => {
    const at = Date.UTC(2026, 0, 5, 7, 24, 0, 117) + 1.25 * 0.6;
    expect(toIsoMicros(at)).toBe("2026-01-05T07:24:00.117750Z");
    expect(parseIso(toIsoMicros(at))).toBe(Math.floor(at));
    expect(toIsoMicros(-0.5)).toBe("1969-12-31T23:59:59.999500Z");
  });

  it("agrees with the platform's calendar across leap years and centuries", () => {
    for (const ms of [
      Date.UTC(2000, 1, 29, 23, 59, 59),
      Date.UTC(2100, 2, 1),
      Date.UTC(1969, 11, 31, 12),
      Date.UTC(2026, 11, 31, 23, 0, 7, 5),
    ]) {
      expect(toIsoMicros(ms).replace("000Z", "Z")).toBe(new Date(ms).toISOString());
      expect(epochFromUtc(utcFields(ms))).toBe(ms);
    }
  });

  it("parses ISO dates with and without offsets, and rejects impossible ones", () => {
    expect(parseIso("2026-01-01")).toBe(Date.UTC(2026, 0, 1));
    expect(parseIso("2024-10-16T04:10:00.000000Z")).toBe(Date.UTC(2024, 9, 16, 4, 10));
    expect(parseIso("2024-10-16T00:10:00-04:00")).toBe(Date.UTC(2024, 9, 16, 4, 10));
    expect(parseIso("2024-02-30")).toBeUndefined();
    expect(parseIso("yesterday")).toBeUndefined();
    // Offsets as ±hh, ±hhmm or ±hh:mm, each under 24 hours.
    expect(parseIso("2024-10-16T09:40:00+05")).toBe(Date.UTC(2024, 9, 16, 4, 40));
    expect(parseIso("2024-10-16T09:40:00+0530")).toBe(Date.UTC(2024, 9, 16, 4, 10));
    expect(parseIso("2024-10-16T04:10:00+99:99")).toBeUndefined();
    expect(parseIso("2024-10-16T04:10:00+05:60")).toBeUndefined();
    expect(parseIso("2024-10-16T04:10:00+24:00")).toBeUndefined();
    expect(parseIso("2024-10-16T04:10:00+0")).toBeUndefined();
  });
});
