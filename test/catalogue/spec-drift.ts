/**
 * Compares loaded profiles with the hand-written spec 2.8 table (spec-2-8.ts) and returns every
 * difference as one readable line, so a test shows all drift at once.
 */
import { isDeepStrictEqual } from "node:util";
import type { FilterParamSpec, Profile, ValueSpec } from "../../src/catalogue/schema.ts";
import {
  ADHERENCE,
  CUFF_CM,
  DEVICE_PROPERTY,
  DEVICE_TYPES,
  FILTER_PARAMS,
  LEGACY_NAMES,
  type SpecDeviceType,
  type SpecFilterParam,
  type SpecFlag,
  type SpecMetric,
  type SpecUnits,
  STATUS,
  VITAL,
} from "./spec-2-8.ts";

type Report = (what: string, actual: unknown, expected: unknown) => void;

const sorted = (items: readonly string[]) => [...items].sort();

function expectedCategory(metric: string): string {
  if (VITAL.has(metric)) return "vital";
  if (STATUS.has(metric)) return "status";
  if (ADHERENCE.has(metric)) return "adherence";
  return "event";
}

function valueDrift(
  what: string,
  actual: ValueSpec | null,
  spec: SpecUnits | SpecFlag | null,
  report: Report,
) {
  if (spec === null || actual === null) {
    report(what, actual === null ? "none" : "a value", spec === null ? "none" : "a value");
    return;
  }
  if ("flag" in spec) {
    // An event value takes exactly the integers 2.8 lists: min..max on a step of 1.
    const { units, min, max, step } = actual;
    report(
      `${what} (event values)`,
      { units, min, max, step },
      {
        units: "flag",
        min: Math.min(...spec.flag),
        max: Math.max(...spec.flag),
        step: 1,
      },
    );
    return;
  }
  report(`${what}.units`, actual.units, spec.units);
  if (spec.meaning !== undefined && !actual.meaning.toLowerCase().includes(spec.meaning)) {
    report(`${what}.meaning`, actual.meaning, `a meaning with "${spec.meaning}"`);
  }
}

function metricDrift(profile: Profile, spec: SpecMetric, report: Report) {
  const metric = profile.metrics.find((m) => m.name === spec.name);
  if (metric === undefined) return; // reported by the metric-name comparison
  report(`${spec.name}.vital`, metric.vital, VITAL.has(spec.name));
  report(`${spec.name}.category`, metric.category, expectedCategory(spec.name));
  valueDrift(`${spec.name}.value_1`, metric.value_1, spec.value_1, report);
  valueDrift(`${spec.name}.value_2`, metric.value_2, spec.value_2, report);
  report(`${spec.name}.filter_params`, sorted(metric.filter_params), sorted(spec.params));
}

function patternDrift(
  what: string,
  pattern: string | undefined,
  spec: SpecFilterParam,
  report: Report,
) {
  if (spec.kind !== "pattern") return;
  const regex = new RegExp(pattern ?? "(?!)");
  for (const sample of spec.accepts)
    if (!regex.test(sample)) report(what, `rejects "${sample}"`, "accepts it");
  for (const sample of spec.rejects)
    if (regex.test(sample)) report(what, `accepts "${sample}"`, "rejects it");
}

function filterParamDrift(
  what: string,
  actual: FilterParamSpec,
  spec: SpecFilterParam,
  report: Report,
) {
  report(`${what}.kind`, actual.kind, spec.kind);
  if (actual.kind === "enum" && spec.kind === "enum") {
    report(`${what}.values`, sorted(actual.values), sorted(spec.values));
    report(`${what}.presence`, actual.presence, spec.presence);
  }
  if (actual.kind === "pattern") patternDrift(`${what}.pattern`, actual.pattern, spec, report);
  if (actual.kind === "flags" && spec.kind === "flags")
    report(`${what}.by_metric`, actual.by_metric, spec.by_metric);
}

function profileDrift(type: SpecDeviceType, profile: Profile, report: Report) {
  const cellular = type.sensorCode === null;
  report("family", profile.family, type.family);
  report("sensor_code", profile.sensor_code, type.sensorCode);
  report("connectivity", profile.connectivity, cellular ? "cellular" : "gateway");
  report("identity", profile.identity, cellular ? "imei" : "gateway");
  report("stores_offline", profile.stores_offline, type.storesOffline);
  report("per_gateway", profile.per_gateway, type.perGateway);
  report("cadence", profile.cadence, type.cadence);
  report("sensor_id.required", profile.sensor_id.required, type.sensorIdRequired);
  report(
    "metrics",
    profile.metrics.map((m) => m.name).sort(),
    type.metrics.map((m) => m.name).sort(),
  );
  for (const metric of type.metrics) metricDrift(profile, metric, report);

  const specParams = FILTER_PARAMS[type.family];
  const params = new Map(profile.filter_params.map((p) => [p.key, p]));
  report("filter_params keys", sorted([...params.keys()]), sorted(Object.keys(specParams)));
  for (const [key, spec] of Object.entries(specParams)) {
    const actual = params.get(key);
    if (actual !== undefined) filterParamDrift(`filter_params.${key}`, actual, spec, report);
  }
  // The inhaler's sensor id is its serial number (2.8), so it follows the serial_number rule.
  if (type.sensorIdRequired && specParams.serial_number !== undefined) {
    patternDrift("sensor_id.pattern", profile.sensor_id.pattern, specParams.serial_number, report);
  }

  const accepts = profile.device_properties.some(
    (p) => p.key === DEVICE_PROPERTY && p.kind === "webhook_id",
  );
  if (!accepts)
    report("device_properties", "no measurement_webhook_id", "measurement_webhook_id (webhook_id)");
  report("cuff_cm", profile.cuff_cm ?? null, CUFF_CM[profile.name] ?? null);
  const legacy = Object.entries(LEGACY_NAMES).flatMap(([old, current]) =>
    current === profile.name ? [old] : [],
  );
  report("legacy_names", sorted(profile.legacy_names), sorted(legacy));
}

/** Every difference between the profiles and spec 2.8, as "profile: field is X, spec says Y". */
export function specDrift(profiles: readonly Profile[]): string[] {
  const drift: string[] = [];
  const byName = new Map(profiles.map((p) => [p.name, p]));
  const specNames = new Set(DEVICE_TYPES.flatMap((t) => t.profiles));
  for (const profile of profiles) {
    if (!specNames.has(profile.name)) drift.push(`${profile.name}: not a device type of spec 2.8`);
  }
  for (const type of DEVICE_TYPES) {
    for (const name of type.profiles) {
      const profile = byName.get(name);
      if (profile === undefined) {
        drift.push(`${name}: missing (spec 2.8 row "${type.type}")`);
        continue;
      }
      profileDrift(type, profile, (what, actual, expected) => {
        if (!isDeepStrictEqual(actual, expected)) {
          drift.push(
            `${name}: ${what} is ${JSON.stringify(actual)}; spec 2.8 "${type.type}" says ${JSON.stringify(expected)}`,
          );
        }
      });
    }
  }
  return drift;
}
