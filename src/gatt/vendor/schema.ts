import type { FilterParamSpec, MetricSpec, Profile } from "../../catalogue/schema.ts";
import { RpmlabError } from "../../core/errors.ts";
import { flagNames, paramSpec } from "../filter-values.ts";
import { type Grid, gridOf } from "../grid.ts";
import { recordTypeOf } from "./record-types.ts";

/**
 * A profile compiled for the vendor record codec: per metric its record type, value grids and the
 * wire form of each filter param it carries. Compiled once per profile object (profiles are
 * immutable once loaded), so encoding a record does no lookups by name beyond one Map get.
 */

/** How a filter param value is laid out in a record (see record.ts). */
export type ParamWire = "uint32" | "enum_index" | "mac48" | "text" | "flags";

/** Keys whose pattern values are 48-bit MAC addresses, sent as 6 bytes (spec 2.8 beacon_id). */
const MAC_KEYS: ReadonlySet<string> = new Set(["beacon_id"]);
/** Longest text filter param value, in bytes (serial numbers are 6–8 characters). */
export const MAX_TEXT_BYTES = 32;
/** Filter params per record: one presence bit each in a uint8. */
const MAX_PARAMS = 8;

export interface ParamLayout {
  readonly key: string;
  /** "<metric>.filter_params.<key>", for messages (built once, not per record). */
  readonly field: string;
  readonly spec: FilterParamSpec;
  readonly wire: ParamWire;
  /** Absent values are allowed (enum with presence when_applicable). */
  readonly optional: boolean;
  /** For flags: names of the 0/1 flags (bit i of the flags byte), then of the integer flags. */
  readonly bitFlags: readonly string[];
  readonly intFlags: readonly string[];
}

export interface MetricLayout {
  readonly metric: MetricSpec;
  readonly index: number;
  readonly recordType: number;
  readonly value1: Grid;
  readonly value2: Grid | null;
  /** "<metric>.value_1" and "<metric>.value_2", for messages. */
  readonly field1: string;
  readonly field2: string;
  readonly params: readonly ParamLayout[];
}

export interface VendorSchema {
  readonly byName: ReadonlyMap<string, MetricLayout>;
}

const cache = new WeakMap<Profile, VendorSchema>();

function invalid(profile: Profile, message: string): RpmlabError {
  return new RpmlabError("E_CODEC_MAPPING", `${profile.name}: metrics: ${message}`, {
    field: "metrics",
  });
}

function paramLayout(profile: Profile, metric: MetricSpec, key: string): ParamLayout {
  const spec = paramSpec(profile, key);
  if (spec === undefined)
    throw invalid(profile, `filter param ${key} of ${metric.name} is not defined`);
  let wire: ParamWire;
  let bitFlags: readonly string[] = [];
  let intFlags: readonly string[] = [];
  switch (spec.kind) {
    case "positive_integer":
      wire = "uint32";
      break;
    case "enum":
      if (spec.values.length > 255) throw invalid(profile, `enum ${key} has over 255 values`);
      wire = "enum_index";
      break;
    case "pattern":
      wire = MAC_KEYS.has(key) ? "mac48" : "text";
      break;
    case "flags": {
      wire = "flags";
      ({ bits: bitFlags, ints: intFlags } = flagNames(spec, metric.name));
      if (bitFlags.length > 8)
        throw invalid(profile, `${key} of ${metric.name} has over 8 bit flags`);
      break;
    }
  }
  const optional = spec.kind === "enum" && spec.presence === "when_applicable";
  const field = `${metric.name}.filter_params.${key}`;
  return { key, field, spec, wire, optional, bitFlags, intFlags };
}

export function vendorSchema(profile: Profile): VendorSchema {
  let schema = cache.get(profile);
  if (schema !== undefined) return schema;
  const byName = new Map<string, MetricLayout>();
  profile.metrics.forEach((metric, index) => {
    const recordType = recordTypeOf(metric.name);
    if (recordType === undefined) {
      throw new RpmlabError(
        "E_CODEC_UNKNOWN",
        `${profile.name}: metrics: ${metric.name} has no vendor record type (src/gatt/vendor/record-types.ts)`,
        { field: "metrics" },
      );
    }
    if (metric.filter_params.length > MAX_PARAMS) {
      throw invalid(profile, `${metric.name} carries over ${MAX_PARAMS} filter params`);
    }
    byName.set(metric.name, {
      metric,
      index,
      recordType,
      value1: gridOf(metric.value_1),
      value2: metric.value_2 === null ? null : gridOf(metric.value_2),
      field1: `${metric.name}.value_1`,
      field2: `${metric.name}.value_2`,
      params: metric.filter_params.map((key) => paramLayout(profile, metric, key)),
    });
  });
  schema = { byName };
  cache.set(profile, schema);
  return schema;
}
