import { type BitFlags, BitTable, CodeTable, rejectReserved } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import type { DateTime } from "../date-time.ts";
import type { Medfloat } from "../medfloat.ts";

/**
 * GSS Glucose Measurement (0x2A18), as the Glucose Profile/Service (GLP/GLS v1.0) use it:
 *
 * | field                                  | size | present     |
 * |----------------------------------------|------|-------------|
 * | Flags                                  | 1    | always      |
 * | Sequence Number (uint16)               | 2    | always      |
 * | Base Time (Date Time)                  | 7    | always      |
 * | Time Offset (sint16, minutes)          | 2    | flags bit 0 |
 * | Glucose Concentration (SFLOAT)         | 2    | flags bit 1 |
 * | Type-Sample Location (type: low nibble, location: high nibble) | 1 | flags bit 1 |
 * | Sensor Status Annunciation (uint16)    | 2    | flags bit 3 |
 *
 * Flags bit 2: concentration units, 0 = kg/L, 1 = mol/L (meaningful only with bit 1); bit 4:
 * a Glucose Measurement Context (0x2A34) with the same sequence number follows; bits 5–7 RFU.
 */

const FLAG_TIME_OFFSET = 0x01;
const FLAG_CONCENTRATION = 0x02;
const FLAG_MOL_PER_L = 0x04;
const FLAG_STATUS = 0x08;
const FLAG_CONTEXT = 0x10;
const FLAGS_DEFINED = 0x1f;

export const GLUCOSE_MEASUREMENT_MAX_LENGTH = 1 + 2 + 7 + 2 + 2 + 1 + 2;

/**
 * Concentrations are written at the resolution meters use: kg/L at exponent -5 (1 mg/dL, so 120
 * mg/dL is mantissa 120, exponent -5), mol/L at -4 (0.1 mmol/L).
 */
export const CONCENTRATION_EXPONENT = { "kg/L": -5, "mol/L": -4 } as const;

/** GSS Glucose Measurement, Type field (low nibble); 0 and 11–15 RFU. */
export const SAMPLE_TYPES = new CodeTable({
  capillary_whole_blood: 1,
  capillary_plasma: 2,
  venous_whole_blood: 3,
  venous_plasma: 4,
  arterial_whole_blood: 5,
  arterial_plasma: 6,
  undetermined_whole_blood: 7,
  undetermined_plasma: 8,
  interstitial_fluid: 9,
  control_solution: 10,
});
export type GlucoseSampleType = keyof typeof SAMPLE_TYPES.codes;

/** GSS Glucose Measurement, Sample Location (high nibble); 0 and 5–14 RFU, 15 = not available. */
export const SAMPLE_LOCATIONS = new CodeTable({
  finger: 1,
  alternate_site_test: 2,
  earlobe: 3,
  control_solution: 4,
  not_available: 15,
});
export type GlucoseSampleLocation = keyof typeof SAMPLE_LOCATIONS.codes;

/** GSS Glucose Measurement, Sensor Status Annunciation (uint16); bits 12–15 RFU. */
export const SENSOR_STATUS = new BitTable({
  deviceBatteryLow: 0,
  sensorMalfunction: 1,
  sampleSizeInsufficient: 2,
  stripInsertionError: 3,
  stripTypeIncorrect: 4,
  resultHigherThanDeviceCanProcess: 5,
  resultLowerThanDeviceCanProcess: 6,
  temperatureTooHigh: 7,
  temperatureTooLow: 8,
  readInterrupted: 9,
  generalDeviceFault: 10,
  timeFault: 11,
});
export type GlucoseSensorStatus = BitFlags<(typeof SENSOR_STATUS.names)[number]>;

export interface GlucoseConcentration {
  readonly unit: "kg/L" | "mol/L";
  readonly value: Medfloat;
  readonly type: GlucoseSampleType;
  readonly location: GlucoseSampleLocation;
}

export interface GlucoseMeasurement {
  readonly sequenceNumber: number;
  readonly baseTime: DateTime;
  /** Minutes to add to the base time (sint16). */
  readonly timeOffset?: number | undefined;
  readonly concentration?: GlucoseConcentration | undefined;
  readonly sensorStatus?: GlucoseSensorStatus | undefined;
  /** Flags bit 4: a Glucose Measurement Context follows. */
  readonly contextFollows: boolean;
}

/** Byte offset of the concentration field in an encoding of `m`. */
export function glucoseConcentrationOffset(m: GlucoseMeasurement): number {
  return 10 + (m.timeOffset === undefined ? 0 : 2);
}

const NAME = "Glucose Measurement";
const writer = new ByteWriter(GLUCOSE_MEASUREMENT_MAX_LENGTH, NAME);

export function encodeGlucoseMeasurement(m: GlucoseMeasurement): Uint8Array {
  const w = writer.start();
  const c = m.concentration;
  if (c !== undefined && c.unit !== "kg/L" && c.unit !== "mol/L") {
    throw w.fail("E_CODEC_RANGE", "concentration.unit", `"${String(c.unit)}" is not kg/L or mol/L`);
  }
  let flags = m.contextFollows ? FLAG_CONTEXT : 0;
  if (m.timeOffset !== undefined) flags |= FLAG_TIME_OFFSET;
  if (c !== undefined)
    flags |= c.unit === "mol/L" ? FLAG_CONCENTRATION | FLAG_MOL_PER_L : FLAG_CONCENTRATION;
  if (m.sensorStatus !== undefined) flags |= FLAG_STATUS;
  w.u8(flags, "flags");
  w.u16(m.sequenceNumber, "sequence_number");
  w.dateTime(m.baseTime, "base_time");
  if (m.timeOffset !== undefined) w.s16(m.timeOffset, "time_offset");
  if (c !== undefined) {
    w.sfloat(c.value, "glucose_concentration", CONCENTRATION_EXPONENT[c.unit]);
    const type = SAMPLE_TYPES.code(w, c.type, "type");
    const location = SAMPLE_LOCATIONS.code(w, c.location, "sample_location");
    w.u8(type | (location << 4), "type_sample_location");
  }
  if (m.sensorStatus !== undefined) {
    SENSOR_STATUS.write(w, 2, m.sensorStatus, "sensor_status_annunciation");
  }
  return w.finish();
}

export function decodeGlucoseMeasurement(bytes: Uint8Array): GlucoseMeasurement {
  const r = new ByteReader(bytes, NAME);
  const flags = r.u8("flags");
  rejectReserved(r, flags, FLAGS_DEFINED, "flags", 0);
  if (flags & FLAG_MOL_PER_L && !(flags & FLAG_CONCENTRATION)) {
    throw r.fail("E_CODEC_FLAGS", "flags", 0, "units bit 2 is set without a concentration (bit 1)");
  }
  const sequenceNumber = r.u16("sequence_number");
  const baseTime = r.dateTime("base_time");
  const timeOffset = flags & FLAG_TIME_OFFSET ? r.s16("time_offset") : undefined;
  let concentration: GlucoseConcentration | undefined;
  if (flags & FLAG_CONCENTRATION) {
    const value = r.sfloat("glucose_concentration");
    const at = r.offset;
    const raw = r.u8("type_sample_location");
    concentration = {
      unit: flags & FLAG_MOL_PER_L ? "mol/L" : "kg/L",
      value,
      type: SAMPLE_TYPES.name(r, raw & 0x0f, "type", at),
      location: SAMPLE_LOCATIONS.name(r, raw >>> 4, "sample_location", at),
    };
  }
  const sensorStatus =
    flags & FLAG_STATUS ? SENSOR_STATUS.read(r, 2, "sensor_status_annunciation") : undefined;
  r.end();
  return {
    sequenceNumber,
    baseTime,
    timeOffset,
    concentration,
    sensorStatus,
    contextFollows: (flags & FLAG_CONTEXT) !== 0,
  };
}
