import type { Profile } from "../../catalogue/schema.ts";
import { RpmlabError } from "../../core/errors.ts";
import type { MetricRecord } from "../../readings/types.ts";
import { rejectReserved } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import { type Grid, gridValue } from "../grid.ts";
import { readFilterParams, writeFilterParams } from "./filter-params.ts";
import { TIMEZONE_MAX, TIMEZONE_MIN } from "./reading-context.ts";
import { metricOfRecordType } from "./record-types.ts";
import { type MetricLayout, vendorSchema } from "./schema.ts";

/**
 * Vendor Record (7e3a0002-…, notify; stored records fetched through the RACP 0x2A52 of the same
 * service): one metric record of spec 2.8 per value, flags first, little-endian.
 *
 * | offset | size | field                                                                   |
 * |--------|------|-------------------------------------------------------------------------|
 * | 0      | 1    | flags: bit 0 value_2 present; bit 1 filter params present; bits 2–7 RFU |
 * | 1      | 2    | sequence number, uint16 (RACP filter type 1)                            |
 * | 3      | 4    | timestamp, uint32 seconds since 1970-01-01T00:00:00Z (UTC)              |
 * | 7      | 1    | timezone offset, sint8 whole hours, -12 to +14                          |
 * | 8      | 1    | record type, uint8: the metric (record-types.ts)                        |
 * | 9      | 4    | value_1, IEEE 11073-20601 FLOAT in the metric's units                   |
 * | 13     | 4    | value_2, FLOAT (flags bit 0)                                            |
 * | …      | 1    | filter params presence: bit i = i-th filter param of the metric in the  |
 * |        |      | profile's order (flags bit 1)                                           |
 * | …      | var  | each present filter param (filter-params.ts): uint32 for positive       |
 * |        |      | integers; uint8 index for enums; 6-byte MAC (LSO first) for beacon_id;  |
 * |        |      | uint8 length + UTF-8 for other patterns (serial_number); flags as a     |
 * |        |      | uint8 of 0/1 flags then a uint32 per integer flag                       |
 *
 * Values are FLOATs written at the profile step's exponent (step 0.01 → exponent -2), so every
 * value a profile allows travels exactly (a 24-bit mantissa: up to 8 388 605 steps, far more
 * than any shipped range). Flags bits 0 and 1 must agree with the profile's metric (value_2
 * defined; filter params listed). Param order and enum indexes come from the profile, so
 * reordering a profile's filter params or enum values changes the wire format. Records of the shipped profiles are 13 to 36 bytes: inhaler records (serial number,
 * log index, angle, flags) pass the 20 bytes a notification carries at the default ATT_MTU of 23,
 * so the vendor service needs an MTU exchange to ATT_MTU ≥ 39 (Core Vol 3 Part F §3.4.2).
 */

export interface VendorRecord {
  /** uint16, the device's record counter. */
  readonly sequenceNumber: number;
  /** Epoch ms, UTC, whole seconds. */
  readonly timestamp: number;
  /** Device UTC offset in whole hours. */
  readonly timezoneOffset: number;
  readonly record: MetricRecord;
}

const FLAG_VALUE_2 = 0x01;
const FLAG_PARAMS = 0x02;
export const VENDOR_RECORD_HEADER_LENGTH = 9;
/** The last instant a record's uint32 timestamp holds: 2106-02-07T06:28:15Z (the first is 1970). */
export const VENDOR_TIMESTAMP_MAX_MS = 0xffff_ffff * 1000;
const NAME = "Vendor Record";
const writer = new ByteWriter(VENDOR_RECORD_HEADER_LENGTH + 8 + 1 + 8 * 33, NAME);

function layoutFor(profile: Profile, metric: string): MetricLayout {
  const layout = vendorSchema(profile).byName.get(metric);
  if (layout === undefined) {
    throw new RpmlabError(
      "E_CODEC_MAPPING",
      `${NAME}: ${metric} is not a metric of ${profile.name}`,
      { field: "metric" },
    );
  }
  return layout;
}

export function encodeVendorRecord(v: VendorRecord, profile: Profile): Uint8Array {
  const { record } = v;
  const layout = layoutFor(profile, record.metric);
  const w = writer.start();
  let flags = layout.value2 === null ? 0 : FLAG_VALUE_2;
  if (layout.params.length > 0) flags |= FLAG_PARAMS;
  w.u8(flags, "flags");
  w.u16(v.sequenceNumber, "sequence_number");
  if (!Number.isInteger(v.timestamp) || v.timestamp % 1000 !== 0) {
    throw w.fail("E_CODEC_RANGE", "timestamp", `${v.timestamp} ms is not a whole second`);
  }
  w.u32(v.timestamp / 1000, "timestamp");
  if (v.timezoneOffset < TIMEZONE_MIN || v.timezoneOffset > TIMEZONE_MAX) {
    throw w.fail("E_CODEC_RANGE", "timezone_offset", `${v.timezoneOffset} h is not -12 to +14`);
  }
  w.s8(v.timezoneOffset, "timezone_offset");
  w.u8(layout.recordType, "record_type");
  writeValue(w, record.value_1, layout.value1, layout.field1);
  if (layout.value2 === null) {
    if (record.value_2 !== null) {
      throw w.fail("E_CODEC_RANGE", layout.field2, `${record.metric} has no value 2; use null`);
    }
  } else {
    if (record.value_2 === null) throw w.fail("E_CODEC_RANGE", layout.field2, "missing (null)");
    writeValue(w, record.value_2, layout.value2, layout.field2);
  }
  writeFilterParams(w, layout, record.filter_params);
  return w.finish();
}

function writeValue(w: ByteWriter, value: number, grid: Grid, field: string): void {
  w.float(gridValue(value, grid, NAME, field, w.offset), field, -grid.decimals);
}

function readValue(r: ByteReader, grid: Grid, field: string): number {
  const at = r.offset;
  const value = r.float(field);
  if (typeof value !== "number") {
    throw r.fail(
      "E_CODEC_RESERVED",
      field,
      at,
      `FLOAT ${value.special} where the metric needs a number`,
    );
  }
  return gridValue(value, grid, NAME, field, at);
}

export function decodeVendorRecord(bytes: Uint8Array, profile: Profile): VendorRecord {
  const r = new ByteReader(bytes, NAME);
  const flags = r.u8("flags");
  rejectReserved(r, flags, FLAG_VALUE_2 | FLAG_PARAMS, "flags", 0);
  const sequenceNumber = r.u16("sequence_number");
  const timestamp = r.u32("timestamp") * 1000;
  const timezoneOffset = r.s8("timezone_offset");
  if (timezoneOffset < TIMEZONE_MIN || timezoneOffset > TIMEZONE_MAX) {
    throw r.fail("E_CODEC_RANGE", "timezone_offset", 7, `${timezoneOffset} h is not -12 to +14`);
  }
  const code = r.u8("record_type");
  const metric = metricOfRecordType(code);
  if (metric === undefined) {
    throw r.fail(
      "E_CODEC_UNKNOWN",
      "record_type",
      8,
      `record type 0x${code.toString(16)} is unknown`,
    );
  }
  const layout = vendorSchema(profile).byName.get(metric);
  if (layout === undefined) {
    throw r.fail(
      "E_CODEC_MAPPING",
      "record_type",
      8,
      `${metric} is not a metric of ${profile.name}`,
    );
  }
  if (((flags & FLAG_VALUE_2) !== 0) !== (layout.value2 !== null)) {
    throw r.fail(
      "E_CODEC_FLAGS",
      "flags",
      0,
      `value_2 bit disagrees with ${metric}, which ${layout.value2 === null ? "has no" : "has a"} value 2`,
    );
  }
  if (((flags & FLAG_PARAMS) !== 0) !== layout.params.length > 0) {
    throw r.fail(
      "E_CODEC_FLAGS",
      "flags",
      0,
      `filter params bit disagrees with ${metric}, which ${layout.params.length === 0 ? "carries none" : "carries some"}`,
    );
  }
  const value_1 = readValue(r, layout.value1, layout.field1);
  const value_2 = layout.value2 === null ? null : readValue(r, layout.value2, layout.field2);
  const filter_params = layout.params.length === 0 ? null : readFilterParams(r, layout);
  r.end();
  return {
    sequenceNumber,
    timestamp,
    timezoneOffset,
    record: { metric, value_1, value_2, filter_params },
  };
}
