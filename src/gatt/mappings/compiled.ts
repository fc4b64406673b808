import type { FilterParamSpec, MetricSpec, Profile } from "../../catalogue/schema.ts";
import { type Grid, gridOf } from "../grid.ts";

/**
 * A profile prepared for the mappings: per metric its index, value grids and filter param
 * definitions, looked up once per profile object (profiles are immutable once loaded) so that
 * encoding and decoding a reading costs one WeakMap lookup, not one per value.
 */
export interface CompiledParam {
  readonly key: string;
  /** "<metric>.filter_params.<key>", for messages (built once, not per record). */
  readonly field: string;
  /** Undefined when the profile does not define the key (the schema prevents it). */
  readonly spec: FilterParamSpec | undefined;
  /** May be absent from a record: an enum with presence when_applicable. */
  readonly optional: boolean;
}

export interface CompiledMetric {
  readonly spec: MetricSpec;
  readonly name: string;
  readonly index: number;
  readonly value1: Grid;
  readonly value2: Grid | null;
  /** "<metric>.value_1" and "<metric>.value_2", for messages. */
  readonly field1: string;
  readonly field2: string;
  readonly params: readonly CompiledParam[];
}

export interface CompiledProfile {
  readonly profile: Profile;
  readonly metrics: readonly CompiledMetric[];
  readonly byName: ReadonlyMap<string, CompiledMetric>;
  /** The mapping that has checked it can carry this profile (see checkCarries). */
  carriedBy: string | undefined;
}

const cache = new WeakMap<Profile, CompiledProfile>();

export function compile(profile: Profile): CompiledProfile {
  let c = cache.get(profile);
  if (c === undefined) {
    const specs = new Map(profile.filter_params.map((p) => [p.key, p]));
    const metrics = profile.metrics.map(
      (spec, index): CompiledMetric => ({
        spec,
        name: spec.name,
        index,
        value1: gridOf(spec.value_1),
        value2: spec.value_2 === null ? null : gridOf(spec.value_2),
        field1: `${spec.name}.value_1`,
        field2: `${spec.name}.value_2`,
        params: spec.filter_params.map((key) => {
          const p = specs.get(key);
          return {
            key,
            field: `${spec.name}.filter_params.${key}`,
            spec: p,
            optional: p?.kind === "enum" && p.presence === "when_applicable",
          };
        }),
      }),
    );
    c = {
      profile,
      metrics,
      byName: new Map(metrics.map((m) => [m.name, m])),
      carriedBy: undefined,
    };
    cache.set(profile, c);
  }
  return c;
}
