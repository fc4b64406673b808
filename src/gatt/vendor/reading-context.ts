import { rejectReserved } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";

/**
 * Vendor Reading Context (7e3a0003-…), sent after a SIG measurement to carry what its
 * characteristic cannot: the device's record sequence (measurement_index, spec 2.8) and its UTC
 * offset (wire-formats.md: timezone_offset in whole hours). Little-endian, flags first:
 *
 * | offset | size | field                                                         |
 * |--------|------|---------------------------------------------------------------|
 * | 0      | 1    | flags: bit 0 measurement_index present; bits 1–7 RFU (0)      |
 * | 1      | 1    | timezone offset, sint8 whole hours, -12 to +14                |
 * | 2      | 4    | measurement_index, uint32 1–4294967295 (flags bit 0)          |
 */
const FLAG_MEASUREMENT_INDEX = 0x01;

export const TIMEZONE_MIN = -12;
export const TIMEZONE_MAX = 14;
export const READING_CONTEXT_MAX_LENGTH = 6;

export interface ReadingContext {
  readonly timezoneOffset: number;
  readonly measurementIndex?: number | undefined;
}

const NAME = "Reading Context";
const writer = new ByteWriter(READING_CONTEXT_MAX_LENGTH, NAME);

export function encodeReadingContext(c: ReadingContext): Uint8Array {
  const w = writer.start();
  w.u8(c.measurementIndex === undefined ? 0 : FLAG_MEASUREMENT_INDEX, "flags");
  if (c.timezoneOffset < TIMEZONE_MIN || c.timezoneOffset > TIMEZONE_MAX) {
    throw w.fail("E_CODEC_RANGE", "timezone_offset", `${c.timezoneOffset} h is not -12 to +14`);
  }
  w.s8(c.timezoneOffset, "timezone_offset");
  if (c.measurementIndex !== undefined) {
    if (c.measurementIndex === 0) {
      throw w.fail("E_CODEC_RANGE", "measurement_index", "0 is not a positive integer");
    }
    w.u32(c.measurementIndex, "measurement_index");
  }
  return w.finish();
}

export function decodeReadingContext(bytes: Uint8Array): ReadingContext {
  const r = new ByteReader(bytes, NAME);
  const flags = r.u8("flags");
  rejectReserved(r, flags, FLAG_MEASUREMENT_INDEX, "flags", 0);
  const timezoneOffset = r.s8("timezone_offset");
  if (timezoneOffset < TIMEZONE_MIN || timezoneOffset > TIMEZONE_MAX) {
    throw r.fail("E_CODEC_RANGE", "timezone_offset", 1, `${timezoneOffset} h is not -12 to +14`);
  }
  let measurementIndex: number | undefined;
  if (flags & FLAG_MEASUREMENT_INDEX) {
    measurementIndex = r.u32("measurement_index");
    if (measurementIndex === 0) {
      throw r.fail("E_CODEC_RANGE", "measurement_index", 2, "0 is not a positive integer");
    }
  }
  r.end();
  return { timezoneOffset, measurementIndex };
}
