import { type BitFlags, BitTable, rejectReserved } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import {
  PLX_DEVICE_AND_SENSOR_STATUS,
  PLX_MEASUREMENT_STATUS,
  type PlxDeviceAndSensorStatus,
  type PlxMeasurementStatus,
} from "./plx-status.ts";

/**
 * GSS PLX Features (0x2A60), PLXS v1.0.1: Supported Features (uint16), then Measurement Status
 * Support (uint16) when bit 0 is set and Device and Sensor Status Support (uint24) when bit 1 is
 * set; bits 8–15 RFU. Bits 0 and 1 are not in `supported`: they follow from the presence of the
 * two support fields.
 */
const SUPPORT_MEASUREMENT_STATUS = 0x01;
const SUPPORT_DEVICE_STATUS = 0x02;
const SUPPORTED = new BitTable({
  spotCheckMeasurementStorage: 2,
  spotCheckTimestamp: 3,
  spo2prFast: 4,
  spo2prSlow: 5,
  pulseAmplitudeIndex: 6,
  multipleBonds: 7,
});
const SUPPORTED_DEFINED = SUPPORTED.mask | SUPPORT_MEASUREMENT_STATUS | SUPPORT_DEVICE_STATUS;

export interface PlxFeatures {
  readonly supported: BitFlags<(typeof SUPPORTED.names)[number]>;
  readonly measurementStatusSupport?: PlxMeasurementStatus | undefined;
  readonly deviceAndSensorStatusSupport?: PlxDeviceAndSensorStatus | undefined;
}

export const PLX_FEATURES_MAX_LENGTH = 2 + 2 + 3;
const NAME = "PLX Features";
const writer = new ByteWriter(PLX_FEATURES_MAX_LENGTH, NAME);

export function encodePlxFeatures(f: PlxFeatures): Uint8Array {
  const w = writer.start();
  let raw = SUPPORTED.pack(f.supported);
  if (f.measurementStatusSupport !== undefined) raw |= SUPPORT_MEASUREMENT_STATUS;
  if (f.deviceAndSensorStatusSupport !== undefined) raw |= SUPPORT_DEVICE_STATUS;
  w.u16(raw, "supported_features");
  if (f.measurementStatusSupport !== undefined) {
    PLX_MEASUREMENT_STATUS.write(w, 2, f.measurementStatusSupport, "measurement_status_support");
  }
  if (f.deviceAndSensorStatusSupport !== undefined) {
    PLX_DEVICE_AND_SENSOR_STATUS.write(
      w,
      3,
      f.deviceAndSensorStatusSupport,
      "device_and_sensor_status_support",
    );
  }
  return w.finish();
}

export function decodePlxFeatures(bytes: Uint8Array): PlxFeatures {
  const r = new ByteReader(bytes, NAME);
  const raw = r.u16("supported_features");
  rejectReserved(r, raw, SUPPORTED_DEFINED, "supported_features", 0);
  const measurementStatusSupport =
    raw & SUPPORT_MEASUREMENT_STATUS
      ? PLX_MEASUREMENT_STATUS.read(r, 2, "measurement_status_support")
      : undefined;
  const deviceAndSensorStatusSupport =
    raw & SUPPORT_DEVICE_STATUS
      ? PLX_DEVICE_AND_SENSOR_STATUS.read(r, 3, "device_and_sensor_status_support")
      : undefined;
  r.end();
  return {
    supported: SUPPORTED.unpack(raw),
    measurementStatusSupport,
    deviceAndSensorStatusSupport,
  };
}
