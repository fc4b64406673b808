import type { Profile } from "../../catalogue/schema.ts";
import { rejectReserved } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import { VENDOR } from "../uuids.ts";
import { metricOfRecordType, recordTypeOf } from "./record-types.ts";

/**
 * Vendor Features (7e3a0004-…, read): what the vendor records service of a device offers.
 *
 * | offset | size | field                                                                    |
 * |--------|------|--------------------------------------------------------------------------|
 * | 0      | 1    | flags: bit 0 stored records (RACP 0x2A52 in the service); bit 1 Reading Context; bits 2–7 RFU |
 * | 1      | 1    | N, number of record types                                                |
 * | 2      | N    | record type codes (record-types.ts), ascending                          |
 */
const FLAG_STORED_RECORDS = 0x01;
const FLAG_READING_CONTEXT = 0x02;

export interface VendorFeatures {
  readonly storedRecords: boolean;
  readonly readingContext: boolean;
  /** Metric names of the record types the device sends, in code order. */
  readonly recordTypes: readonly string[];
}

const NAME = "Vendor Features";
const writer = new ByteWriter(2 + 255, NAME);

export function encodeVendorFeatures(f: VendorFeatures): Uint8Array {
  const w = writer.start();
  w.u8(
    (f.storedRecords ? FLAG_STORED_RECORDS : 0) | (f.readingContext ? FLAG_READING_CONTEXT : 0),
    "flags",
  );
  const codes = f.recordTypes.map((metric) => {
    const code = recordTypeOf(metric);
    if (code === undefined)
      throw w.fail("E_CODEC_UNKNOWN", "record_types", `no record type for ${metric}`);
    return code;
  });
  codes.sort((a, b) => a - b);
  w.u8(codes.length, "record_type_count");
  for (const code of codes) w.u8(code, "record_types");
  return w.finish();
}

export function decodeVendorFeatures(bytes: Uint8Array): VendorFeatures {
  const r = new ByteReader(bytes, NAME);
  const flags = r.u8("flags");
  rejectReserved(r, flags, FLAG_STORED_RECORDS | FLAG_READING_CONTEXT, "flags", 0);
  const count = r.u8("record_type_count");
  const recordTypes: string[] = [];
  let previous = -1;
  for (let i = 0; i < count; i++) {
    const at = r.offset;
    const code = r.u8("record_types");
    const metric = metricOfRecordType(code);
    if (metric === undefined)
      throw r.fail(
        "E_CODEC_UNKNOWN",
        "record_types",
        at,
        `record type 0x${code.toString(16)} is unknown`,
      );
    if (code <= previous)
      throw r.fail("E_CODEC_RANGE", "record_types", at, "record types are not in ascending order");
    previous = code;
    recordTypes.push(metric);
  }
  r.end("record_types");
  return {
    storedRecords: (flags & FLAG_STORED_RECORDS) !== 0,
    readingContext: (flags & FLAG_READING_CONTEXT) !== 0,
    recordTypes,
  };
}

/**
 * What a device of `profile` announces: its metrics as record types, stored records when the
 * profile has a RACP (0x2A52), the Reading Context when it lists that characteristic.
 */
export function vendorFeaturesOf(profile: Profile): VendorFeatures {
  const uuids = new Set(profile.gatt.characteristics.map((c) => c.uuid));
  return {
    storedRecords: uuids.has("2A52"),
    readingContext: uuids.has(VENDOR.readingContext),
    recordTypes: profile.metrics
      .map((m) => m.name)
      .sort((a, b) => (recordTypeOf(a) ?? 0) - (recordTypeOf(b) ?? 0)),
  };
}
