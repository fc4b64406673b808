import { type BitFlags, BitTable } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";

/**
 * GSS Glucose Feature (0x2A51), uint16: what the meter can detect and report in the Sensor Status
 * Annunciation of its measurements; bits 11–15 RFU.
 */
const FEATURE = new BitTable({
  lowBatteryDetection: 0,
  sensorMalfunctionDetection: 1,
  sensorSampleSize: 2,
  sensorStripInsertionErrorDetection: 3,
  sensorStripTypeErrorDetection: 4,
  sensorResultHighLowDetection: 5,
  sensorTemperatureHighLowDetection: 6,
  sensorReadInterruptDetection: 7,
  generalDeviceFault: 8,
  timeFault: 9,
  multipleBond: 10,
});
export type GlucoseFeature = BitFlags<(typeof FEATURE.names)[number]>;

const NAME = "Glucose Feature";
const writer = new ByteWriter(2, NAME);

export function encodeGlucoseFeature(f: GlucoseFeature): Uint8Array {
  const w = writer.start();
  FEATURE.write(w, 2, f, "features");
  return w.finish();
}

export function decodeGlucoseFeature(bytes: Uint8Array): GlucoseFeature {
  const r = new ByteReader(bytes, NAME);
  const f = FEATURE.read(r, 2, "features");
  r.end("features");
  return f;
}
