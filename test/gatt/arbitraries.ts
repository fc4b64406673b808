/**
 * fast-check arbitraries of valid PhysicalReadings for a profile, built from its metric specs
 * alone (ranges, steps, filter param definitions, emitted). Values are canonical decimals (the
 * double a decimal literal parses to), computed here independently of src/gatt's grid code.
 */
import fc from "fast-check";
import type {
  FilterParamSpec,
  MetricSpec,
  Profile,
  ValueSpec,
} from "../../src/catalogue/schema.ts";
import type { FilterParamValue, MetricRecord, PhysicalReading } from "../../src/readings/types.ts";

/** 2000-01-01 to 2099-12-31, whole seconds (Date Time and the vendor record hold seconds). */
const FIRST_SECOND = 946_684_800;
const LAST_SECOND = 4_102_358_400;

function decimals(step: number): number {
  return String(step).split(".")[1]?.length ?? 0;
}

/** A value on the spec's grid: k × step for a whole k, within [min, max]. */
export function valueArb(spec: ValueSpec): fc.Arbitrary<number> {
  const d = decimals(spec.step);
  const lo = Math.ceil(Number((spec.min / spec.step).toFixed(6)));
  const hi = Math.floor(Number((spec.max / spec.step).toFixed(6)));
  return fc.integer({ min: lo, max: hi }).map((k) => Number((k * spec.step).toFixed(d)));
}

function flagsArb(spec: FilterParamSpec & { kind: "flags" }, metric: string) {
  const entries = Object.entries(spec.by_metric[metric] ?? {});
  const shape: Record<string, fc.Arbitrary<number>> = {};
  for (const [name, kind] of entries) {
    shape[name] = kind === "bit" ? fc.constantFrom(0, 1) : fc.integer({ min: 1, max: 0xffffffff });
  }
  // fc.record builds null-prototype objects; readings hold plain ones.
  return fc.record(shape).map((flags) => ({ ...flags }));
}

/**
 * Strings matching an anchored pattern. The profiles' patterns are one character class repeated
 * ("^[A-Za-z0-9]{6,8}$", "^[0-9A-F]{12}$"): those are drawn directly, which is far faster than
 * fc.stringMatching; any other pattern falls back to it.
 */
function patternArb(pattern: string): fc.Arbitrary<string> {
  const m = /^\^\[((?:[0-9A-Za-z]-[0-9A-Za-z]|[0-9A-Za-z])+)\]\{(\d+)(?:,(\d+))?\}\$$/.exec(
    pattern,
  );
  if (m === null) return fc.stringMatching(new RegExp(pattern));
  const chars: string[] = [];
  for (const [, from, to] of m[1]!.matchAll(/(.)(?:-(.))?/g)) {
    for (let c = from!.charCodeAt(0); c <= (to ?? from!).charCodeAt(0); c++)
      chars.push(String.fromCharCode(c));
  }
  const minLength = Number(m[2]);
  const maxLength = m[3] === undefined ? minLength : Number(m[3]);
  return fc.string({ unit: fc.constantFrom(...chars), minLength, maxLength });
}

/** A value of one filter param (undefined: left out, for enums present only when applicable). */
function paramArb(
  spec: FilterParamSpec,
  metric: string,
): fc.Arbitrary<FilterParamValue | undefined> {
  switch (spec.kind) {
    case "positive_integer":
      return fc.integer({ min: 1, max: 0xffffffff });
    case "enum": {
      const value = fc.constantFrom(...spec.values);
      return spec.presence === "when_applicable" ? fc.option(value, { nil: undefined }) : value;
    }
    case "pattern":
      return patternArb(spec.pattern);
    case "flags":
      return flagsArb(spec, metric);
  }
}

function recordArb(
  metric: MetricSpec,
  profile: Profile,
  shared: Readonly<Record<string, FilterParamValue>>,
): fc.Arbitrary<MetricRecord> {
  const params: Record<string, fc.Arbitrary<FilterParamValue | undefined>> = {};
  for (const key of metric.filter_params) {
    const spec = profile.filter_params.find((p) => p.key === key)!;
    const one = shared[key];
    params[key] = one !== undefined ? fc.constant(one) : paramArb(spec, metric.name);
  }
  return fc
    .record({
      value_1: valueArb(metric.value_1),
      value_2: metric.value_2 === null ? fc.constant(null) : valueArb(metric.value_2),
      params: fc.record(params),
    })
    .map(({ value_1, value_2, params: raw }) => {
      const filter: Record<string, FilterParamValue> = {};
      for (const [key, value] of Object.entries(raw)) if (value !== undefined) filter[key] = value;
      // A reading above the measuring range is reported as the top value with its flag (glucometer HI).
      const above = metric.above_range;
      const flagged = above !== undefined && filter[above.filter_param] === above.value;
      return {
        metric: metric.name,
        value_1: flagged ? above.reported_as : value_1,
        value_2,
        filter_params: metric.filter_params.length === 0 ? null : filter,
      };
    });
}

/**
 * A valid reading of the profile: every `always` metric, any subset of the others (at least one
 * record in all), in the profile's order; measurement_index shared by the reading's records.
 */
export function readingArb(profile: Profile): fc.Arbitrary<PhysicalReading> {
  const sharedSpecs = profile.filter_params.filter((p) => p.key === "measurement_index");
  const sharedArb = fc.record(
    Object.fromEntries(sharedSpecs.map((p) => [p.key, fc.integer({ min: 1, max: 0xffffffff })])),
  );
  return sharedArb.chain((shared) =>
    fc
      .record({
        seconds: fc.integer({ min: FIRST_SECOND, max: LAST_SECOND }),
        timezone_offset: fc.integer({ min: -12, max: 14 }),
        included: fc.tuple(
          ...profile.metrics.map((m) =>
            m.emitted === "always" ? fc.constant(true) : fc.boolean(),
          ),
        ),
        records: fc.tuple(...profile.metrics.map((m) => recordArb(m, profile, shared))),
      })
      .map(({ seconds, timezone_offset, included, records }) => {
        const chosen = records.filter((_, i) => included[i]);
        return {
          timestamp: seconds * 1000,
          timezone_offset,
          records: chosen.length > 0 ? chosen : records.slice(0, 1),
        };
      }),
  );
}
