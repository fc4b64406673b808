import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import { ByteReader, ByteWriter } from "../../src/gatt/cursor.ts";
import { dateTimeFromEpochMs, epochMsFromDateTime } from "../../src/gatt/date-time.ts";
import { dateTimeArb } from "./value-arbitraries.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const bytes = (h: string) => Uint8Array.from(Buffer.from(h, "hex"));

function caught(fn: () => unknown): RpmlabError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RpmlabError) return error;
    throw error;
  }
  throw new Error("expected an RpmlabError");
}

describe("ByteReader", () => {
  it("reads little-endian integers", () => {
    const r = new ByteReader(bytes("ff3412fe7856341278563412"), "Test");
    expect(r.s8("a")).toBe(-1);
    expect(r.u16("b")).toBe(0x1234);
    expect(r.s8("c")).toBe(-2);
    expect(r.u24("d")).toBe(0x345678);
    expect(r.u8("e")).toBe(0x12);
    expect(r.u32("f")).toBe(0x12345678);
    r.end("f");
    expect(new ByteReader(bytes("ffffffff"), "Test").u32("x")).toBe(0xffffffff);
    expect(new ByteReader(bytes("0080"), "Test").s16("x")).toBe(-32768);
  });

  it("fails a short value with E_CODEC_TRUNCATED naming the field and byte offset", () => {
    const r = new ByteReader(bytes("0278"), "Blood Pressure Measurement");
    r.u8("flags");
    const error = caught(() => r.u16("systolic"));
    expect(error.code).toBe("E_CODEC_TRUNCATED");
    expect(error.message).toBe(
      "Blood Pressure Measurement: truncated at byte 1 reading systolic (needs 2 bytes, 1 left)",
    );
    expect(error.details).toEqual({ field: "systolic", offset: 1 });
  });

  it("fails trailing bytes with E_CODEC_LENGTH", () => {
    const r = new ByteReader(bytes("640000"), "Battery Level");
    r.u8("battery_level");
    const error = caught(() => r.end("battery_level"));
    expect(error.code).toBe("E_CODEC_LENGTH");
    expect(error.message).toBe("Battery Level: 2 trailing byte(s) at byte 1 after battery_level");
    expect(error.details.offset).toBe(1);
  });
});

describe("ByteWriter", () => {
  it("range-checks every integer it writes, naming the field", () => {
    const w = new ByteWriter(8, "Test").start();
    for (const [write, v] of [
      [(x: number) => w.u8(x, "user_id"), 256],
      [(x: number) => w.u8(x, "user_id"), -1],
      [(x: number) => w.u8(x, "user_id"), 1.5],
      [(x: number) => w.s8(x, "timezone_offset"), 128],
      [(x: number) => w.u16(x, "sequence_number"), 65536],
      [(x: number) => w.s16(x, "time_offset"), -32769],
      [(x: number) => w.u24(x, "status"), 0x1000000],
      [(x: number) => w.u32(x, "measurement_index"), 2 ** 32],
    ] as const) {
      const error = caught(() => write(v));
      expect(error.code).toBe("E_CODEC_RANGE");
      expect(error.message).toMatch(/^Test: \w+: /);
    }
  });

  it("refuses to grow past its capacity", () => {
    const w = new ByteWriter(2, "Battery Level").start();
    w.u16(1, "a");
    expect(caught(() => w.u8(1, "b")).code).toBe("E_CODEC_LENGTH");
  });

  it("hands out copies: later writes do not change earlier values", () => {
    const w = new ByteWriter(2, "Test");
    w.start().u16(0x0102, "a");
    const first = w.finish();
    w.start().u16(0x0304, "a");
    expect(hex(first)).toBe("0201");
    expect(hex(w.finish())).toBe("0403");
  });
});

describe("Date Time (GSS §3.70)", () => {
  it("writes and reads the 7-byte layout", () => {
    const w = new ByteWriter(7, "Test").start();
    w.dateTime({ year: 2024, month: 10, day: 16, hours: 4, minutes: 10, seconds: 0 }, "time_stamp");
    expect(hex(w.finish())).toBe("e8070a10040a00");
    expect(new ByteReader(bytes("00000000000000"), "Test").dateTime("t")).toEqual({
      year: 0,
      month: 0,
      day: 0,
      hours: 0,
      minutes: 0,
      seconds: 0,
    });
  });

  it("round-trips every valid Date Time", () => {
    fc.assert(
      fc.property(dateTimeArb, (dt) => {
        const w = new ByteWriter(7, "Test").start();
        w.dateTime(dt, "time_stamp");
        expect(new ByteReader(w.finish(), "Test").dateTime("time_stamp")).toEqual(dt);
      }),
      { numRuns: 1000 },
    );
  });

  it("rejects each part out of range with its byte offset", () => {
    const cases: Array<[string, string, number]> = [
      ["2d060a10040a00", "time_stamp.year", 1], // 1581
      ["e8070d10040a00", "time_stamp.month", 3], // month 13
      ["e8070b1f040a00", "time_stamp.day", 4], // 31 November
      ["e907021d040a00", "time_stamp.day", 4], // 29 February 2025
      ["e8070a10180a00", "time_stamp.hours", 5],
      ["e8070a10043c00", "time_stamp.minutes", 6],
      ["e8070a10040a3c", "time_stamp.seconds", 7],
    ];
    for (const [h, field, offset] of cases) {
      const r = new ByteReader(bytes(`00${h}`), "Test");
      r.u8("flags");
      const error = caught(() => r.dateTime("time_stamp"));
      expect(error.code, h).toBe("E_CODEC_RANGE");
      expect(error.details, h).toEqual({ field, offset });
      expect(error.message).toContain(`${field} at byte ${offset}`);
    }
    // 29 February of a leap year, and of an unknown year, are valid.
    expect(new ByteReader(bytes("e807021d000000"), "Test").dateTime("t").day).toBe(29);
    expect(new ByteReader(bytes("0000021d000000"), "Test").dateTime("t").day).toBe(29);
  });

  it("converts epoch time both ways in whole seconds", () => {
    fc.assert(
      fc.property(fc.integer({ min: -12_219_292_800, max: 253_402_300_799 }), (s) => {
        const dt = dateTimeFromEpochMs(s * 1000, "Test", "timestamp");
        expect(epochMsFromDateTime(dt, "Test", "timestamp")).toBe(s * 1000);
      }),
      { numRuns: 1000 },
    );
    expect(dateTimeFromEpochMs(Date.UTC(2024, 1, 29, 23, 59, 59), "T", "t")).toEqual({
      year: 2024,
      month: 2,
      day: 29,
      hours: 23,
      minutes: 59,
      seconds: 59,
    });
    expect(caught(() => dateTimeFromEpochMs(1500, "T", "timestamp")).code).toBe("E_CODEC_RANGE");
    expect(caught(() => dateTimeFromEpochMs(Date.UTC(1500, 0, 1), "T", "timestamp")).code).toBe(
      "E_CODEC_RANGE",
    );
    const unknown = { year: 2024, month: 0, day: 1, hours: 0, minutes: 0, seconds: 0 };
    expect(caught(() => epochMsFromDateTime(unknown, "T", "base_time")).message).toContain(
      "base_time",
    );
  });
});
