import type { MetricRecord, PhysicalReading } from "../../readings/types.ts";
import { decodeBatteryLevel, encodeBatteryLevel } from "../characteristics/battery-level.ts";
import type { Grid } from "../grid.ts";
import { gridValue } from "../grid.ts";
import type { CharacteristicValue } from "../mapping.ts";
import { SIG, VENDOR } from "../uuids.ts";
import { decodeReadingContext, encodeReadingContext } from "../vendor/reading-context.ts";
import type { CompiledProfile } from "./compiled.ts";
import { sharedParam } from "./shared.ts";

/**
 * The values every SIG-measurement mapping sends beside its measurement: Battery Level (2A19)
 * when the reading has a battery record, and the vendor Reading Context with what the SIG
 * characteristics cannot carry (measurement_index and the UTC offset).
 */
export function companionValues(
  reading: PhysicalReading,
  slots: ReadonlyArray<MetricRecord | undefined>,
  c: CompiledProfile,
  battery: number | undefined,
  what: string,
): CharacteristicValue[] {
  const values: CharacteristicValue[] = [];
  if (battery !== undefined) {
    values.push({ uuid: SIG.characteristics.batteryLevel, value: encodeBatteryLevel(battery) });
  }
  const measurementIndex = sharedParam(slots, c, "measurement_index", what) as number | undefined;
  values.push({
    uuid: VENDOR.readingContext,
    value: encodeReadingContext({ timezoneOffset: reading.timezone_offset, measurementIndex }),
  });
  return values;
}

/**
 * The Reading Context of a decoded reading. A device that sends none (a real SIG peripheral) is
 * taken to report UTC, with no measurement_index.
 */
export function readingContextOf(value: Uint8Array | undefined): {
  timezone: number;
  measurementIndex: number | undefined;
} {
  const ctx = value === undefined ? undefined : decodeReadingContext(value);
  return { timezone: ctx?.timezoneOffset ?? 0, measurementIndex: ctx?.measurementIndex };
}

/** battery_percentage from a Battery Level value, checked against the metric's grid. */
export function batteryValue(value: Uint8Array, grid: Grid, what: string): number {
  return gridValue(decodeBatteryLevel(value), grid, what, "battery_level", 0);
}
