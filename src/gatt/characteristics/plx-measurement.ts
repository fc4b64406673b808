import { rejectReserved } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import type { DateTime } from "../date-time.ts";
import type { Medfloat } from "../medfloat.ts";
import {
  PLX_DEVICE_AND_SENSOR_STATUS,
  PLX_MEASUREMENT_STATUS,
  type PlxDeviceAndSensorStatus,
  type PlxMeasurementStatus,
} from "./plx-status.ts";

/**
 * GSS PLX Spot-check Measurement (0x2A5E), PLXS v1.0.1:
 *
 * | field                                   | size | present     |
 * |-----------------------------------------|------|-------------|
 * | Flags                                   | 1    | always      |
 * | SpO2PR-Spot-Check: SpO2 (SFLOAT, %), PR (SFLOAT, bpm) | 4 | always |
 * | Timestamp (Date Time)                   | 7    | flags bit 0 |
 * | Measurement Status (uint16)             | 2    | flags bit 1 |
 * | Device and Sensor Status (uint24)       | 3    | flags bit 2 |
 * | Pulse Amplitude Index (SFLOAT, %)       | 2    | flags bit 3 |
 *
 * Flags bit 4: device clock is not set; bits 5–7 RFU.
 */

const SPOT_TIMESTAMP = 0x01;
const SPOT_STATUS = 0x02;
const SPOT_DEVICE_STATUS = 0x04;
const SPOT_PAI = 0x08;
const SPOT_CLOCK_NOT_SET = 0x10;
const SPOT_DEFINED = 0x1f;

export const PLX_SPOT_CHECK_MAX_LENGTH = 1 + 4 + 7 + 2 + 3 + 2;

export interface PlxSpotCheckMeasurement {
  readonly spo2: Medfloat;
  readonly pulseRate: Medfloat;
  readonly timestamp?: DateTime | undefined;
  readonly measurementStatus?: PlxMeasurementStatus | undefined;
  readonly deviceAndSensorStatus?: PlxDeviceAndSensorStatus | undefined;
  /** Pulse amplitude index in percent (perfusion index). */
  readonly pulseAmplitudeIndex?: Medfloat | undefined;
  readonly deviceClockNotSet: boolean;
}

/** Byte offsets of fields, for errors raised after decoding. */
export const PLX_SPOT_CHECK_OFFSETS = { spo2: 1, pulse_rate: 3, timestamp: 5 } as const;
export function plxSpotCheckPaiOffset(m: PlxSpotCheckMeasurement): number {
  return (
    5 +
    (m.timestamp === undefined ? 0 : 7) +
    (m.measurementStatus === undefined ? 0 : 2) +
    (m.deviceAndSensorStatus === undefined ? 0 : 3)
  );
}

const SPOT_NAME = "PLX Spot-check Measurement";
const spotWriter = new ByteWriter(PLX_SPOT_CHECK_MAX_LENGTH, SPOT_NAME);

export function encodePlxSpotCheckMeasurement(m: PlxSpotCheckMeasurement): Uint8Array {
  const w = spotWriter.start();
  let flags = m.deviceClockNotSet ? SPOT_CLOCK_NOT_SET : 0;
  if (m.timestamp !== undefined) flags |= SPOT_TIMESTAMP;
  if (m.measurementStatus !== undefined) flags |= SPOT_STATUS;
  if (m.deviceAndSensorStatus !== undefined) flags |= SPOT_DEVICE_STATUS;
  if (m.pulseAmplitudeIndex !== undefined) flags |= SPOT_PAI;
  w.u8(flags, "flags");
  w.sfloat(m.spo2, "spo2");
  w.sfloat(m.pulseRate, "pulse_rate");
  if (m.timestamp !== undefined) w.dateTime(m.timestamp, "timestamp");
  if (m.measurementStatus !== undefined) {
    PLX_MEASUREMENT_STATUS.write(w, 2, m.measurementStatus, "measurement_status");
  }
  if (m.deviceAndSensorStatus !== undefined) {
    PLX_DEVICE_AND_SENSOR_STATUS.write(w, 3, m.deviceAndSensorStatus, "device_and_sensor_status");
  }
  if (m.pulseAmplitudeIndex !== undefined) {
    w.sfloat(m.pulseAmplitudeIndex, "pulse_amplitude_index", -1);
  }
  return w.finish();
}

export function decodePlxSpotCheckMeasurement(bytes: Uint8Array): PlxSpotCheckMeasurement {
  const r = new ByteReader(bytes, SPOT_NAME);
  const flags = r.u8("flags");
  rejectReserved(r, flags, SPOT_DEFINED, "flags", 0);
  const spo2 = r.sfloat("spo2");
  const pulseRate = r.sfloat("pulse_rate");
  const timestamp = flags & SPOT_TIMESTAMP ? r.dateTime("timestamp") : undefined;
  const measurementStatus =
    flags & SPOT_STATUS ? PLX_MEASUREMENT_STATUS.read(r, 2, "measurement_status") : undefined;
  const deviceAndSensorStatus =
    flags & SPOT_DEVICE_STATUS
      ? PLX_DEVICE_AND_SENSOR_STATUS.read(r, 3, "device_and_sensor_status")
      : undefined;
  const pulseAmplitudeIndex = flags & SPOT_PAI ? r.sfloat("pulse_amplitude_index") : undefined;
  r.end();
  return {
    spo2,
    pulseRate,
    timestamp,
    measurementStatus,
    deviceAndSensorStatus,
    pulseAmplitudeIndex,
    deviceClockNotSet: (flags & SPOT_CLOCK_NOT_SET) !== 0,
  };
}

/**
 * GSS PLX Continuous Measurement (0x2A5F), PLXS v1.0.1:
 *
 * | field                                   | size | present     |
 * |-----------------------------------------|------|-------------|
 * | Flags                                   | 1    | always      |
 * | SpO2PR-Normal: SpO2, PR (SFLOAT)        | 4    | always      |
 * | SpO2PR-Fast: SpO2, PR                   | 4    | flags bit 0 |
 * | SpO2PR-Slow: SpO2, PR                   | 4    | flags bit 1 |
 * | Measurement Status (uint16)             | 2    | flags bit 2 |
 * | Device and Sensor Status (uint24)       | 3    | flags bit 3 |
 * | Pulse Amplitude Index (SFLOAT, %)       | 2    | flags bit 4 |
 *
 * Flags bits 5–7 RFU.
 */

const CONT_FAST = 0x01;
const CONT_SLOW = 0x02;
const CONT_STATUS = 0x04;
const CONT_DEVICE_STATUS = 0x08;
const CONT_PAI = 0x10;
const CONT_DEFINED = 0x1f;

export const PLX_CONTINUOUS_MAX_LENGTH = 1 + 4 + 4 + 4 + 2 + 3 + 2;

export interface SpO2PR {
  readonly spo2: Medfloat;
  readonly pulseRate: Medfloat;
}

export interface PlxContinuousMeasurement {
  readonly normal: SpO2PR;
  readonly fast?: SpO2PR | undefined;
  readonly slow?: SpO2PR | undefined;
  readonly measurementStatus?: PlxMeasurementStatus | undefined;
  readonly deviceAndSensorStatus?: PlxDeviceAndSensorStatus | undefined;
  readonly pulseAmplitudeIndex?: Medfloat | undefined;
}

const CONT_NAME = "PLX Continuous Measurement";
const contWriter = new ByteWriter(PLX_CONTINUOUS_MAX_LENGTH, CONT_NAME);

export function encodePlxContinuousMeasurement(m: PlxContinuousMeasurement): Uint8Array {
  const w = contWriter.start();
  let flags = 0;
  if (m.fast !== undefined) flags |= CONT_FAST;
  if (m.slow !== undefined) flags |= CONT_SLOW;
  if (m.measurementStatus !== undefined) flags |= CONT_STATUS;
  if (m.deviceAndSensorStatus !== undefined) flags |= CONT_DEVICE_STATUS;
  if (m.pulseAmplitudeIndex !== undefined) flags |= CONT_PAI;
  w.u8(flags, "flags");
  w.sfloat(m.normal.spo2, "spo2_normal");
  w.sfloat(m.normal.pulseRate, "pulse_rate_normal");
  if (m.fast !== undefined) {
    w.sfloat(m.fast.spo2, "spo2_fast");
    w.sfloat(m.fast.pulseRate, "pulse_rate_fast");
  }
  if (m.slow !== undefined) {
    w.sfloat(m.slow.spo2, "spo2_slow");
    w.sfloat(m.slow.pulseRate, "pulse_rate_slow");
  }
  if (m.measurementStatus !== undefined) {
    PLX_MEASUREMENT_STATUS.write(w, 2, m.measurementStatus, "measurement_status");
  }
  if (m.deviceAndSensorStatus !== undefined) {
    PLX_DEVICE_AND_SENSOR_STATUS.write(w, 3, m.deviceAndSensorStatus, "device_and_sensor_status");
  }
  if (m.pulseAmplitudeIndex !== undefined) {
    w.sfloat(m.pulseAmplitudeIndex, "pulse_amplitude_index", -1);
  }
  return w.finish();
}

export function decodePlxContinuousMeasurement(bytes: Uint8Array): PlxContinuousMeasurement {
  const r = new ByteReader(bytes, CONT_NAME);
  const flags = r.u8("flags");
  rejectReserved(r, flags, CONT_DEFINED, "flags", 0);
  const normal = { spo2: r.sfloat("spo2_normal"), pulseRate: r.sfloat("pulse_rate_normal") };
  const fast =
    flags & CONT_FAST
      ? { spo2: r.sfloat("spo2_fast"), pulseRate: r.sfloat("pulse_rate_fast") }
      : undefined;
  const slow =
    flags & CONT_SLOW
      ? { spo2: r.sfloat("spo2_slow"), pulseRate: r.sfloat("pulse_rate_slow") }
      : undefined;
  const measurementStatus =
    flags & CONT_STATUS ? PLX_MEASUREMENT_STATUS.read(r, 2, "measurement_status") : undefined;
  const deviceAndSensorStatus =
    flags & CONT_DEVICE_STATUS
      ? PLX_DEVICE_AND_SENSOR_STATUS.read(r, 3, "device_and_sensor_status")
      : undefined;
  const pulseAmplitudeIndex = flags & CONT_PAI ? r.sfloat("pulse_amplitude_index") : undefined;
  r.end();
  return { normal, fast, slow, measurementStatus, deviceAndSensorStatus, pulseAmplitudeIndex };
}
