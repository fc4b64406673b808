import { canonicalUuid, SIG } from "./uuids.ts";

/** PLX Spot-check Measurement flags (byte 0) bit 4: Device Clock is Not Set (PLXS 1.0.1). */
const PLX_SPOT_CHECK_CLOCK_NOT_SET = 0x10;

/**
 * Whether a reading's own values say the device's clock was not set when it took it, so that
 * its time stamp is a guess: a PLX Spot-check Measurement with flags bit 4. Read at its fixed
 * place without decoding the rest, as recordSequenceOf reads sequence numbers.
 */
export function valuesSayClockNotSet(
  values: readonly { readonly uuid: string; readonly value: Uint8Array }[],
): boolean {
  return values.some(
    (v) =>
      canonicalUuid(v.uuid) === SIG.characteristics.plxSpotCheckMeasurement &&
      ((v.value[0] ?? 0) & PLX_SPOT_CHECK_CLOCK_NOT_SET) !== 0,
  );
}
