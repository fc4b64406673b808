import type { FilterParamSpec, Profile } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";
import type { FilterParamValue } from "../readings/types.ts";

/**
 * Checks of filter_params values against the profile's definitions (spec 2.8 "Filter params by
 * device type"), shared by every mapping on both sides: positive integers (measurement_index,
 * device_log_index; at most uint32 on the wire), enum values, patterns (serial_number, beacon_id)
 * and the inhaler's per-metric flags.
 */

export const UINT32_MAX = 0xffffffff;

const specCache = new WeakMap<Profile, ReadonlyMap<string, FilterParamSpec>>();
const regexCache = new WeakMap<FilterParamSpec, RegExp>();

/** The profile's definition of filter param `key`, or undefined. */
export function paramSpec(profile: Profile, key: string): FilterParamSpec | undefined {
  let specs = specCache.get(profile);
  if (specs === undefined) {
    specs = new Map(profile.filter_params.map((p) => [p.key, p]));
    specCache.set(profile, specs);
  }
  return specs.get(key);
}

export function patternOf(spec: FilterParamSpec & { kind: "pattern" }): RegExp {
  let re = regexCache.get(spec);
  if (re === undefined) {
    re = new RegExp(spec.pattern);
    regexCache.set(spec, re);
  }
  return re;
}

export interface FlagNames {
  /** Names of the 0/1 flags, in the profile's order. */
  readonly bits: readonly string[];
  /** Names of the positive integer flags, in the profile's order. */
  readonly ints: readonly string[];
}
const flagCache = new WeakMap<FilterParamSpec, Map<string, FlagNames>>();

/** Flag names of a metric in a flags param, split by kind, in the profile's order. */
export function flagNames(spec: FilterParamSpec & { kind: "flags" }, metric: string): FlagNames {
  let byMetric = flagCache.get(spec);
  if (byMetric === undefined) {
    byMetric = new Map();
    flagCache.set(spec, byMetric);
  }
  let names = byMetric.get(metric);
  if (names === undefined) {
    const bits: string[] = [];
    const ints: string[] = [];
    for (const [name, kind] of Object.entries(spec.by_metric[metric] ?? {})) {
      (kind === "bit" ? bits : ints).push(name);
    }
    names = { bits, ints };
    byMetric.set(metric, names);
  }
  return names;
}

function bad(
  what: string,
  field: string,
  offset: number | undefined,
  message: string,
): RpmlabError {
  const where = offset === undefined ? "" : ` at byte ${offset}`;
  return new RpmlabError(
    "E_CODEC_RANGE",
    `${what}: ${field}${where}: ${message}`,
    offset === undefined ? { field } : { field, offset },
  );
}

export function isPositiveUint32(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= UINT32_MAX;
}

/**
 * `value` if it is allowed for filter param `spec` on a record of `metric`; E_CODEC_RANGE naming
 * `field` (e.g. "glucose.filter_params.meal_context") otherwise.
 */
export function checkParamValue(
  spec: FilterParamSpec,
  metric: string,
  value: unknown,
  what: string,
  field: string,
  offset?: number,
): FilterParamValue {
  switch (spec.kind) {
    case "positive_integer":
      if (!isPositiveUint32(value)) {
        throw bad(
          what,
          field,
          offset,
          `${String(value)} is not a positive integer up to ${UINT32_MAX}`,
        );
      }
      return value;
    case "enum":
      if (typeof value !== "string" || !spec.values.includes(value)) {
        throw bad(
          what,
          field,
          offset,
          `${JSON.stringify(value)} is not one of ${spec.values.join(" | ")}`,
        );
      }
      return value;
    case "pattern":
      if (typeof value !== "string" || !patternOf(spec).test(value)) {
        throw bad(what, field, offset, `${JSON.stringify(value)} does not match ${spec.pattern}`);
      }
      return value;
    case "flags": {
      const { bits, ints } = flagNames(spec, metric);
      if (typeof value !== "object" || value === null) {
        throw bad(what, field, offset, `${JSON.stringify(value)} is not an object of flags`);
      }
      const flags = value as Record<string, unknown>;
      let named = Object.keys(flags).length === bits.length + ints.length;
      for (const name of bits) if (flags[name] === undefined) named = false;
      for (const name of ints) if (flags[name] === undefined) named = false;
      if (!named) {
        throw bad(
          what,
          field,
          offset,
          `has keys ${Object.keys(flags).join(", ")}; ${metric} takes ${[...bits, ...ints].join(", ")}`,
        );
      }
      for (const name of bits) {
        if (flags[name] !== 0 && flags[name] !== 1) {
          throw bad(what, `${field}.${name}`, offset, `${String(flags[name])} is not 0 or 1`);
        }
      }
      for (const name of ints) {
        if (!isPositiveUint32(flags[name])) {
          throw bad(
            what,
            `${field}.${name}`,
            offset,
            `${String(flags[name])} is not a positive integer`,
          );
        }
      }
      return flags as Readonly<Record<string, number>>;
    }
  }
}
