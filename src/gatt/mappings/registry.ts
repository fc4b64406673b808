import type { ReadingMapping } from "../mapping.ts";
import { bloodPressureMapping } from "./blood-pressure.ts";
import { glucoseMapping } from "./glucose.ts";
import { pulseOximeterMapping } from "./pulse-oximeter.ts";
import { VENDOR_RECORD_MAPPINGS } from "./vendor-records.ts";
import { weightScaleMapping } from "./weight-scale.ts";

/** Every GATT mapping by the name profiles give in `gatt.mapping`. */
export const MAPPINGS: ReadonlyMap<string, ReadingMapping> = new Map(
  [
    bloodPressureMapping,
    weightScaleMapping,
    pulseOximeterMapping,
    glucoseMapping,
    ...VENDOR_RECORD_MAPPINGS,
  ].map((m) => [m.name, m]),
);
