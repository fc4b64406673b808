import { rejectReserved } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import type { DateTime } from "../date-time.ts";

/**
 * GSS §3.252 Weight Measurement (0x2A9D), WSS v1.0:
 *
 * | field                  | size | present     | resolution                     |
 * |------------------------|------|-------------|--------------------------------|
 * | Flags                  | 1    | always      |                                |
 * | Weight (uint16)        | 2    | always      | SI 0.005 kg, imperial 0.01 lb; 0xFFFF = measurement unsuccessful |
 * | Time Stamp (Date Time) | 7    | flags bit 1 |                                |
 * | User ID                | 1    | flags bit 2 | 255 = unknown user             |
 * | BMI (uint16)           | 2    | flags bit 3 | 0.1 kg/m²                      |
 * | Height (uint16)        | 2    | flags bit 3 | SI 0.001 m, imperial 0.1 in    |
 *
 * Flags bit 0: 0 = SI (kg, m), 1 = imperial (lb, in); bits 4–7 RFU.
 */

const FLAG_IMPERIAL = 0x01;
const FLAG_TIME_STAMP = 0x02;
const FLAG_USER_ID = 0x04;
const FLAG_BMI_HEIGHT = 0x08;
const FLAGS_DEFINED = 0x0f;
const UNSUCCESSFUL = 0xffff;

export const WEIGHT_MAX_LENGTH = 1 + 2 + 7 + 1 + 2 + 2;

/** Raw units per kg or lb (SI 0.005 kg → 200 per kg; imperial 0.01 lb → 100 per lb). */
const WEIGHT_SCALE = { SI: 200, imperial: 100 } as const;
const HEIGHT_SCALE = { SI: 1000, imperial: 10 } as const;
const BMI_SCALE = 10;

export interface WeightMeasurement {
  /** SI: weight in kg and height in m; imperial: lb and in. */
  readonly unit: "SI" | "imperial";
  /** In kg or lb; null when the scale reports "Measurement Unsuccessful" (0xFFFF). */
  readonly weight: number | null;
  readonly timeStamp?: DateTime | undefined;
  /** 0–254; 255 = unknown user. */
  readonly userId?: number | undefined;
  /** BMI in kg/m² and height in m or in, present together (flags bit 3). */
  readonly bmi?: number | undefined;
  readonly height?: number | undefined;
}

/** Byte offset of the User ID field in an encoding of `m` (after weight and time stamp). */
export function weightUserIdOffset(m: WeightMeasurement): number {
  return 3 + (m.timeStamp === undefined ? 0 : 7);
}

const NAME = "Weight Measurement";
const writer = new ByteWriter(WEIGHT_MAX_LENGTH, NAME);

/** value × scale as a whole uint16 below `limit`, or E_CODEC_RANGE. */
function fixed(w: ByteWriter, value: number, scale: number, limit: number, field: string): void {
  const raw = Math.round(value * scale);
  if (!Number.isFinite(value) || Math.abs(value * scale - raw) > 1e-6 || raw < 0 || raw > limit) {
    throw w.fail(
      "E_CODEC_RANGE",
      field,
      `${value} is not a multiple of ${1 / scale} in 0–${limit / scale}`,
    );
  }
  w.u16(raw, field);
}

export function encodeWeightMeasurement(m: WeightMeasurement): Uint8Array {
  const w = writer.start();
  if (m.unit !== "SI" && m.unit !== "imperial") {
    throw w.fail("E_CODEC_RANGE", "unit", `"${String(m.unit)}" is not SI or imperial`);
  }
  if ((m.bmi === undefined) !== (m.height === undefined)) {
    throw w.fail("E_CODEC_FLAGS", "bmi", "BMI and height are present together or not at all");
  }
  let flags = m.unit === "imperial" ? FLAG_IMPERIAL : 0;
  if (m.timeStamp !== undefined) flags |= FLAG_TIME_STAMP;
  if (m.userId !== undefined) flags |= FLAG_USER_ID;
  if (m.bmi !== undefined) flags |= FLAG_BMI_HEIGHT;
  w.u8(flags, "flags");
  if (m.weight === null) w.u16(UNSUCCESSFUL, "weight");
  else fixed(w, m.weight, WEIGHT_SCALE[m.unit], UNSUCCESSFUL - 1, "weight");
  if (m.timeStamp !== undefined) w.dateTime(m.timeStamp, "time_stamp");
  if (m.userId !== undefined) w.u8(m.userId, "user_id");
  if (m.bmi !== undefined && m.height !== undefined) {
    fixed(w, m.bmi, BMI_SCALE, 0xffff, "bmi");
    fixed(w, m.height, HEIGHT_SCALE[m.unit], 0xffff, "height");
  }
  return w.finish();
}

export function decodeWeightMeasurement(bytes: Uint8Array): WeightMeasurement {
  const r = new ByteReader(bytes, NAME);
  const flags = r.u8("flags");
  rejectReserved(r, flags, FLAGS_DEFINED, "flags", 0);
  const unit = flags & FLAG_IMPERIAL ? "imperial" : "SI";
  const raw = r.u16("weight");
  // Dividing the whole raw value rounds once, to the double nearest the decimal (12345/100).
  const weight = raw === UNSUCCESSFUL ? null : raw / WEIGHT_SCALE[unit];
  const timeStamp = flags & FLAG_TIME_STAMP ? r.dateTime("time_stamp") : undefined;
  const userId = flags & FLAG_USER_ID ? r.u8("user_id") : undefined;
  let bmi: number | undefined;
  let height: number | undefined;
  if (flags & FLAG_BMI_HEIGHT) {
    bmi = r.u16("bmi") / BMI_SCALE;
    height = r.u16("height") / HEIGHT_SCALE[unit];
  }
  r.end();
  return { unit, weight, timeStamp, userId, bmi, height };
}

/**
 * GSS §3.253 Weight Scale Feature (0x2A9E), uint32: bit 0 time stamp, bit 1 multiple users, bit 2
 * BMI supported; bits 3–6 weight resolution, bits 7–9 height resolution; bits 10–31 RFU.
 */
const FEATURE_FLAGS = { timeStamp: 0x1, multipleUsers: 0x2, bmi: 0x4 } as const;
const FEATURE_DEFINED = 0x3ff;

/** Weight resolution codes 1–7: 0.5 kg / 1 lb … 0.005 kg / 0.01 lb; 0 = not specified. */
export const WEIGHT_RESOLUTIONS = [
  "not_specified",
  "0.5kg_1lb",
  "0.2kg_0.5lb",
  "0.1kg_0.2lb",
  "0.05kg_0.1lb",
  "0.02kg_0.05lb",
  "0.01kg_0.02lb",
  "0.005kg_0.01lb",
] as const;
/** Height resolution codes 1–3: 0.01 m / 1 in, 0.005 m / 0.5 in, 0.001 m / 0.1 in; 0 = not specified. */
export const HEIGHT_RESOLUTIONS = [
  "not_specified",
  "0.01m_1in",
  "0.005m_0.5in",
  "0.001m_0.1in",
] as const;

export interface WeightScaleFeature {
  readonly timeStamp: boolean;
  readonly multipleUsers: boolean;
  readonly bmi: boolean;
  readonly weightResolution: (typeof WEIGHT_RESOLUTIONS)[number];
  readonly heightResolution: (typeof HEIGHT_RESOLUTIONS)[number];
}

const FEATURE_NAME = "Weight Scale Feature";
const featureWriter = new ByteWriter(4, FEATURE_NAME);

export function encodeWeightScaleFeature(f: WeightScaleFeature): Uint8Array {
  const w = featureWriter.start();
  const weightRes = WEIGHT_RESOLUTIONS.indexOf(f.weightResolution);
  const heightRes = HEIGHT_RESOLUTIONS.indexOf(f.heightResolution);
  if (weightRes < 0) {
    throw w.fail("E_CODEC_RANGE", "weight_resolution", `"${f.weightResolution}" is not defined`);
  }
  if (heightRes < 0) {
    throw w.fail("E_CODEC_RANGE", "height_resolution", `"${f.heightResolution}" is not defined`);
  }
  let raw = (weightRes << 3) | (heightRes << 7);
  if (f.timeStamp) raw |= FEATURE_FLAGS.timeStamp;
  if (f.multipleUsers) raw |= FEATURE_FLAGS.multipleUsers;
  if (f.bmi) raw |= FEATURE_FLAGS.bmi;
  w.u32(raw, "features");
  return w.finish();
}

export function decodeWeightScaleFeature(bytes: Uint8Array): WeightScaleFeature {
  const r = new ByteReader(bytes, FEATURE_NAME);
  const raw = r.u32("features");
  rejectReserved(r, raw, FEATURE_DEFINED, "features", 0);
  const weightResolution = WEIGHT_RESOLUTIONS[(raw >>> 3) & 0xf];
  if (weightResolution === undefined) {
    throw r.fail("E_CODEC_RESERVED", "weight_resolution", 0, `code ${(raw >>> 3) & 0xf} is RFU`);
  }
  const heightResolution = HEIGHT_RESOLUTIONS[(raw >>> 7) & 0x7];
  if (heightResolution === undefined) {
    throw r.fail("E_CODEC_RESERVED", "height_resolution", 0, `code ${(raw >>> 7) & 0x7} is RFU`);
  }
  r.end("features");
  return {
    timeStamp: (raw & FEATURE_FLAGS.timeStamp) !== 0,
    multipleUsers: (raw & FEATURE_FLAGS.multipleUsers) !== 0,
    bmi: (raw & FEATURE_FLAGS.bmi) !== 0,
    weightResolution,
    heightResolution,
  };
}
