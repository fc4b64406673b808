import { SIG, VENDOR } from "./uuids.ts";
import { decodeReadingContext } from "./vendor/reading-context.ts";

/**
 * The record sequence number a value carries, read at its fixed place without decoding the
 * rest: Glucose Measurement (GLS §3.1: flags, then Sequence Number uint16), Vendor Record (flags,
 * then sequence uint16), Vendor Reading Context (measurement_index). The gateway needs only this
 * to ask RACP for "records with sequence ≥ n".
 */
export function recordSequenceOf(uuid: string, value: Uint8Array): number | undefined {
  try {
    if (uuid === SIG.characteristics.glucoseMeasurement || uuid === VENDOR.record) {
      return value.length >= 3 ? value[1]! | (value[2]! << 8) : undefined;
    }
    if (uuid === VENDOR.readingContext) return decodeReadingContext(value).measurementIndex;
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * Whether record sequence number `a` comes at or after `b` on the 16-bit circle devices count
 * on (they wrap from 0xFFFF to 1), by RFC 1982 serial number arithmetic: at or after when less
 * than half the circle ahead. A device past the wrap then still reports 1, 2… to a central that
 * asks for "≥ 0xFFFF", and one asking for "≥ 0" (0xFFFF + 1) gets only those.
 */
export function sequenceAtOrAfter(a: number, b: number): boolean {
  return ((a - b) & 0xffff) < 0x8000;
}
