import type { Profile } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";
import type { PhysicalReading } from "../readings/types.ts";
import { MAPPINGS } from "./mappings/registry.ts";

/** One characteristic value as a device sends it (notification, indication or read). */
export interface CharacteristicValue {
  /** As uuids.ts spells it: "2A35", or a lower-case 128-bit UUID. */
  readonly uuid: string;
  readonly value: Uint8Array;
}

/**
 * A decoded reading. `leftOut` (present only when not empty) holds the codec's error, naming the
 * field and byte, of each record left out because a real device sent its value past the
 * profile's range or off its step, while the reading's other records are kept (README "Real
 * hardware"); ingestion stores those and dead-letters the message with these reasons.
 */
export interface DecodedReading extends PhysicalReading {
  readonly leftOut?: readonly RpmlabError[];
}

/**
 * How a device type's readings travel over GATT: `encode` gives the values the device sends for
 * one physical reading, `decode` turns them back into the reading. decode(encode(r)) deep-equals
 * r for every valid reading of the profile (records in the profile's metric order, values as
 * canonical decimals, same filter_params). Both sides check values against the profile (range,
 * step, filter param definitions) and fail with an RpmlabError naming the field.
 */
export interface ReadingMapping {
  /** The profile's `gatt.mapping` name. */
  readonly name: string;
  /**
   * `sequence` is the device's record counter (uint16), written where the characteristics carry
   * one (Glucose Measurement, vendor records: the n-th record of the reading gets sequence + n);
   * it defaults to 0. It is not part of the reading and does not come back from `decode`.
   */
  encode(reading: PhysicalReading, profile: Profile, sequence?: number): CharacteristicValue[];
  /**
   * `undatedAt` (epoch ms, UTC) is the time given to a reading whose measurement carries no time
   * stamp, where its characteristic makes one optional (Blood Pressure, Weight, PLX Spot-check:
   * a device without a clock); without it such a reading is refused (E_CODEC_MAPPING).
   */
  decode(
    values: readonly CharacteristicValue[],
    profile: Profile,
    undatedAt?: number,
  ): DecodedReading;
}

/** The mapping a profile names in `gatt.mapping`; E_CODEC_UNKNOWN when there is none. */
export function mappingFor(profile: Profile): ReadingMapping {
  const mapping = MAPPINGS.get(profile.gatt.mapping);
  if (mapping === undefined) {
    throw new RpmlabError(
      "E_CODEC_UNKNOWN",
      `${profile.name}: gatt.mapping: no GATT mapping named "${profile.gatt.mapping}"; known: ${[...MAPPINGS.keys()].join(", ")}`,
      { field: "gatt.mapping" },
    );
  }
  return mapping;
}
