import type { FilterParamSpec, MetricSpec, Profile, ValueSpec } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";

/**
 * Per-profile facts the generator needs on every record, computed once per profile (not per
 * reading): where each metric goes in the record order, how to clamp and round its values, which
 * filter_params keys it carries and which of them are the reading's index.
 */

/** Clamping and rounding of value_1 or value_2 to the profile's range and step. */
export interface ValuePlan {
  readonly spec: ValueSpec;
  /** Smallest and largest multiples of step inside [min, max]. */
  readonly low: number;
  readonly high: number;
  readonly step: number;
  /** 10^decimals of step: rounding through integers keeps 98.7 from becoming 98.70000000000002. */
  readonly scale: number;
  readonly stepUnits: number;
}

export interface MetricPlan {
  readonly name: string;
  /** Position in the profile's metric list: records of a reading follow this order. */
  readonly position: number;
  readonly spec: MetricSpec;
  readonly value1: ValuePlan;
  readonly value2: ValuePlan | null;
  /** filter_params keys of this metric's records, in the profile's order. */
  readonly keys: readonly string[];
  /** Keys whose value is the reading's index (positive_integer keys: measurement_index…). */
  readonly indexKeys: ReadonlySet<string>;
  /** Keys that may be left out (enum keys with presence when_applicable, e.g. alert). */
  readonly optionalKeys: ReadonlySet<string>;
  /** True when every key is an index key: the reading's records can share one params object. */
  readonly indexOnly: boolean;
  /** The keys joined: records of one reading with equal signatures can share index params. */
  readonly signature: string;
  /** How a value above the measuring range is reported (glucometer HI + alert, spec 2.8). */
  readonly aboveRange: MetricSpec["above_range"];
}

export interface ProfilePlan {
  readonly profile: Profile;
  readonly metrics: readonly MetricPlan[];
  readonly byName: ReadonlyMap<string, MetricPlan>;
  readonly params: ReadonlyMap<string, FilterParamSpec>;
}

function decimals(step: number): number {
  const text = String(step);
  const exp = /e-(\d+)$/.exec(text);
  if (exp) return Number(exp[1]);
  const dot = text.indexOf(".");
  return dot < 0 ? 0 : text.length - dot - 1;
}

export function valuePlan(spec: ValueSpec): ValuePlan {
  const scale = 10 ** decimals(spec.step);
  const stepUnits = Math.round(spec.step * scale);
  // Range ends as multiples of step, so a clamped value is still on the step grid.
  const low = (Math.ceil(Math.round(spec.min * scale) / stepUnits) * stepUnits) / scale;
  const high = (Math.floor(Math.round(spec.max * scale) / stepUnits) * stepUnits) / scale;
  return { spec, low, high, step: spec.step, scale, stepUnits };
}

/** Rounds to the step grid, then clamps into the measuring range (a device shows LO / HI). */
export function quantize(plan: ValuePlan, value: number): number {
  const units = Math.round((value * plan.scale) / plan.stepUnits) * plan.stepUnits;
  // `+ 0` turns -0 (from rounding a tiny negative) into 0, which JSON and deep equality agree on.
  const rounded = units / plan.scale + 0;
  return Math.max(plan.low, Math.min(plan.high, rounded));
}

function metricPlan(
  metric: MetricSpec,
  position: number,
  params: ReadonlyMap<string, FilterParamSpec>,
): MetricPlan {
  const indexKeys = new Set<string>();
  const optionalKeys = new Set<string>();
  for (const key of metric.filter_params) {
    const spec = params.get(key);
    if (spec?.kind === "positive_integer") indexKeys.add(key);
    if (spec?.kind === "enum" && spec.presence === "when_applicable") optionalKeys.add(key);
  }
  return {
    name: metric.name,
    position,
    spec: metric,
    value1: valuePlan(metric.value_1),
    value2: metric.value_2 === null ? null : valuePlan(metric.value_2),
    keys: metric.filter_params,
    indexKeys,
    optionalKeys,
    indexOnly: metric.filter_params.length > 0 && indexKeys.size === metric.filter_params.length,
    signature: metric.filter_params.join(","),
    aboveRange: metric.above_range,
  };
}

const cache = new WeakMap<Profile, ProfilePlan>();

export function profilePlan(profile: Profile): ProfilePlan {
  const cached = cache.get(profile);
  if (cached !== undefined) return cached;
  const params = new Map(profile.filter_params.map((f) => [f.key, f] as const));
  const metrics = profile.metrics.map((m, i) => metricPlan(m, i, params));
  const plan: ProfilePlan = {
    profile,
    metrics,
    byName: new Map(metrics.map((m) => [m.name, m] as const)),
    params,
  };
  cache.set(profile, plan);
  return plan;
}

/** The profile's spelling of an enum value, matched case-insensitively; throws when absent. */
export function enumValue(plan: ProfilePlan, key: string, wanted: string): string {
  const spec = plan.params.get(key);
  const values = spec?.kind === "enum" ? spec.values : [];
  const found = values.find((v) => v.toLowerCase() === wanted.toLowerCase());
  if (found === undefined) {
    throw new RpmlabError(
      "E_PROFILE_INVALID",
      `${plan.profile.name}: filter param "${key}" has no value "${wanted}" (has: ${values.join(", ") || "none"})`,
      { field: `filter_params.${key}` },
    );
  }
  return found;
}

/** Every value of an enum filter param, as the profile lists them. */
export function enumValues(plan: ProfilePlan, key: string): readonly string[] {
  const spec = plan.params.get(key);
  return spec?.kind === "enum" ? spec.values : [];
}
