import { canonicalUuid, SIG } from "./uuids.ts";

/** PLX Spot-check Measurement flags (byte 0) bit 4: Device Clock is Not Set (PLXS 1.0.1). */
const PLX_SPOT_CHECK_CLOCK_NOT_SET = 0x10;
/** PLX Spot-check Measurement flags bit 0: Timestamp present (PLXS 1.0.1). */
const PLX_SPOT_CHECK_TIMESTAMP = 0x01;
/** Blood Pressure and Weight Measurement flags bit 1: Time Stamp present (BLS 1.0, WSS 1.0). */
const TIME_STAMP_PRESENT = 0x02;
/** Glucose Measurement flags: Time Offset (bit 0), concentration (bit 1), status (bit 3). */
const GLUCOSE_TIME_OFFSET = 0x01;
const GLUCOSE_CONCENTRATION = 0x02;
const GLUCOSE_STATUS = 0x08;
/** Sensor Status Annunciation bit 11: time fault, the time may be inaccurate (GLS 1.0). */
const GLUCOSE_TIME_FAULT = 0x0800;

/** Whether a Glucose Measurement's Sensor Status Annunciation reports a time fault. */
function glucoseTimeFault(value: Uint8Array): boolean {
  const flags = value[0] ?? 0;
  if (!(flags & GLUCOSE_STATUS)) return false;
  // Flags, Sequence Number, Base Time; then the optional fields the flags announce.
  const at = 10 + (flags & GLUCOSE_TIME_OFFSET ? 2 : 0) + (flags & GLUCOSE_CONCENTRATION ? 3 : 0);
  return (((value[at] ?? 0) | ((value[at + 1] ?? 0) << 8)) & GLUCOSE_TIME_FAULT) !== 0;
}

/**
 * Whether a reading's own values say the device's clock was not right when it took it, so that
 * its time stamp is a guess: a PLX Spot-check Measurement with flags bit 4 (Device Clock is Not
 * Set), a Glucose Measurement annunciating a time fault; or that it has no clock at all: a
 * Blood Pressure, Weight or PLX Spot-check Measurement without its optional time stamp (the
 * mapping then dates it at the receive time, ReadingMapping.decode `undatedAt`). Read at their
 * fixed places without decoding the rest, as recordSequenceOf reads sequence numbers.
 */
export function valuesSayClockNotSet(
  values: readonly { readonly uuid: string; readonly value: Uint8Array }[],
): boolean {
  return values.some((v) => {
    const uuid = canonicalUuid(v.uuid);
    const flags = v.value[0] ?? 0;
    if (uuid === SIG.characteristics.plxSpotCheckMeasurement) {
      return (flags & PLX_SPOT_CHECK_CLOCK_NOT_SET) !== 0 || !(flags & PLX_SPOT_CHECK_TIMESTAMP);
    }
    if (
      uuid === SIG.characteristics.bloodPressureMeasurement ||
      uuid === SIG.characteristics.weightMeasurement
    ) {
      return !(flags & TIME_STAMP_PRESENT);
    }
    return uuid === SIG.characteristics.glucoseMeasurement && glucoseTimeFault(v.value);
  });
}
