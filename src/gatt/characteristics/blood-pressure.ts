import { type BitFlags, BitTable, rejectReserved } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import type { DateTime } from "../date-time.ts";
import type { Medfloat } from "../medfloat.ts";

/**
 * GSS §3.31 Blood Pressure Measurement (0x2A35), BLS/BPS v1.1:
 *
 * | field                          | size | present        |
 * |--------------------------------|------|----------------|
 * | Flags                          | 1    | always         |
 * | Systolic, Diastolic, MAP       | 2×3  | always (SFLOAT, mmHg or kPa) |
 * | Time Stamp (Date Time)         | 7    | flags bit 1    |
 * | Pulse Rate (SFLOAT, bpm)       | 2    | flags bit 2    |
 * | User ID                        | 1    | flags bit 3    |
 * | Measurement Status             | 2    | flags bit 4    |
 *
 * Flags bit 0: units, 0 = mmHg, 1 = kPa; bits 5–7 RFU.
 */

const FLAG_KPA = 0x01;
const FLAG_TIME_STAMP = 0x02;
const FLAG_PULSE_RATE = 0x04;
const FLAG_USER_ID = 0x08;
const FLAG_STATUS = 0x10;
const FLAGS_DEFINED = 0x1f;

export const BPM_MAX_LENGTH = 1 + 6 + 7 + 2 + 1 + 2;
/** Offsets of the fixed fields, for errors raised after decoding (a value where a number is due). */
export const BPM_OFFSETS = {
  systolic: 1,
  diastolic: 3,
  mean_arterial_pressure: 5,
  time_stamp: 7,
} as const;

/** GSS §3.31.2 Measurement Status: one-bit flags; bits 3–4 are the pulse rate range (below). */
const STATUS = new BitTable({
  bodyMovementDetected: 0,
  cuffTooLoose: 1,
  irregularPulseDetected: 2,
  improperMeasurementPosition: 5,
});
const STATUS_PULSE_RANGE_SHIFT = 3;
const STATUS_DEFINED = STATUS.mask | (0b11 << STATUS_PULSE_RANGE_SHIFT);
const PULSE_RANGES = ["within_range", "exceeds_upper_limit", "below_lower_limit"] as const;
export type PulseRateRange = (typeof PULSE_RANGES)[number];

export type BloodPressureStatus = BitFlags<
  "bodyMovementDetected" | "cuffTooLoose" | "irregularPulseDetected" | "improperMeasurementPosition"
> & { readonly pulseRateRange: PulseRateRange };

export interface BloodPressureMeasurement {
  readonly unit: "mmHg" | "kPa";
  readonly systolic: Medfloat;
  readonly diastolic: Medfloat;
  readonly meanArterialPressure: Medfloat;
  readonly timeStamp?: DateTime | undefined;
  readonly pulseRate?: Medfloat | undefined;
  /** 0–254; 255 = unknown user (GSS §3.31: User ID). */
  readonly userId?: number | undefined;
  readonly status?: BloodPressureStatus | undefined;
}

/** Byte offset of the pulse rate field in an encoding of `m` (after the optional time stamp). */
export function bpmPulseRateOffset(m: BloodPressureMeasurement): number {
  return 7 + (m.timeStamp === undefined ? 0 : 7);
}

/** Byte offset of the User ID field in an encoding of `m` (after time stamp and pulse rate). */
export function bpmUserIdOffset(m: BloodPressureMeasurement): number {
  return bpmPulseRateOffset(m) + (m.pulseRate === undefined ? 0 : 2);
}

const NAME = "Blood Pressure Measurement";
const writer = new ByteWriter(BPM_MAX_LENGTH, NAME);

export function encodeBloodPressureMeasurement(m: BloodPressureMeasurement): Uint8Array {
  const w = writer.start();
  if (m.unit !== "mmHg" && m.unit !== "kPa") {
    throw w.fail("E_CODEC_RANGE", "unit", `"${String(m.unit)}" is not mmHg or kPa`);
  }
  let flags = m.unit === "kPa" ? FLAG_KPA : 0;
  if (m.timeStamp !== undefined) flags |= FLAG_TIME_STAMP;
  if (m.pulseRate !== undefined) flags |= FLAG_PULSE_RATE;
  if (m.userId !== undefined) flags |= FLAG_USER_ID;
  if (m.status !== undefined) flags |= FLAG_STATUS;
  w.u8(flags, "flags");
  w.sfloat(m.systolic, "systolic");
  w.sfloat(m.diastolic, "diastolic");
  w.sfloat(m.meanArterialPressure, "mean_arterial_pressure");
  if (m.timeStamp !== undefined) w.dateTime(m.timeStamp, "time_stamp");
  if (m.pulseRate !== undefined) w.sfloat(m.pulseRate, "pulse_rate");
  if (m.userId !== undefined) w.u8(m.userId, "user_id");
  if (m.status !== undefined) {
    const range = PULSE_RANGES.indexOf(m.status.pulseRateRange);
    if (range < 0) {
      throw w.fail(
        "E_CODEC_RANGE",
        "measurement_status.pulse_rate_range",
        `"${String(m.status.pulseRateRange)}" is not one of ${PULSE_RANGES.join(", ")}`,
      );
    }
    w.u16(STATUS.pack(m.status) | (range << STATUS_PULSE_RANGE_SHIFT), "measurement_status");
  }
  return w.finish();
}

export function decodeBloodPressureMeasurement(bytes: Uint8Array): BloodPressureMeasurement {
  const r = new ByteReader(bytes, NAME);
  const flags = r.u8("flags");
  rejectReserved(r, flags, FLAGS_DEFINED, "flags", 0);
  const systolic = r.sfloat("systolic");
  const diastolic = r.sfloat("diastolic");
  const meanArterialPressure = r.sfloat("mean_arterial_pressure");
  const timeStamp = flags & FLAG_TIME_STAMP ? r.dateTime("time_stamp") : undefined;
  const pulseRate = flags & FLAG_PULSE_RATE ? r.sfloat("pulse_rate") : undefined;
  const userId = flags & FLAG_USER_ID ? r.u8("user_id") : undefined;
  let status: BloodPressureStatus | undefined;
  if (flags & FLAG_STATUS) {
    const at = r.offset;
    const raw = r.u16("measurement_status");
    rejectReserved(r, raw, STATUS_DEFINED, "measurement_status", at);
    const range = PULSE_RANGES[(raw >>> STATUS_PULSE_RANGE_SHIFT) & 0b11];
    if (range === undefined) {
      throw r.fail(
        "E_CODEC_RESERVED",
        "measurement_status.pulse_rate_range",
        at,
        "pulse rate range 3 is reserved for future use",
      );
    }
    // Written out rather than STATUS.unpack: this runs for every blood pressure reading.
    status = {
      bodyMovementDetected: (raw & 0x01) !== 0,
      cuffTooLoose: (raw & 0x02) !== 0,
      irregularPulseDetected: (raw & 0x04) !== 0,
      improperMeasurementPosition: (raw & 0x20) !== 0,
      pulseRateRange: range,
    };
  }
  r.end();
  return {
    unit: flags & FLAG_KPA ? "kPa" : "mmHg",
    systolic,
    diastolic,
    meanArterialPressure,
    timeStamp,
    pulseRate,
    userId,
    status,
  };
}

/**
 * GSS §3.30 Blood Pressure Feature (0x2A49), uint16; bits 9–15 RFU. Bits 5–8 came with BPS v1.1.1
 * (multiple bonds, E2E-CRC, User Data Service, user facing time).
 */
const FEATURE = new BitTable({
  bodyMovementDetection: 0,
  cuffFitDetection: 1,
  irregularPulseDetection: 2,
  pulseRateRangeDetection: 3,
  measurementPositionDetection: 4,
  multipleBonds: 5,
  e2eCrc: 6,
  userDataService: 7,
  userFacingTime: 8,
});
export type BloodPressureFeature = BitFlags<(typeof FEATURE.names)[number]>;

const FEATURE_NAME = "Blood Pressure Feature";
const featureWriter = new ByteWriter(2, FEATURE_NAME);

export function encodeBloodPressureFeature(f: BloodPressureFeature): Uint8Array {
  const w = featureWriter.start();
  FEATURE.write(w, 2, f, "features");
  return w.finish();
}

export function decodeBloodPressureFeature(bytes: Uint8Array): BloodPressureFeature {
  const r = new ByteReader(bytes, FEATURE_NAME);
  const f = FEATURE.read(r, 2, "features");
  r.end("features");
  return f;
}
