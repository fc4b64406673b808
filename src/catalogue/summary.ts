import type { Profile, ValueSpec } from "./schema.ts";

/** What `rpmlab profiles list --json` prints per profile: the spec 2.8 view of a device type. */
export interface ValueSummary {
  meaning: string;
  units: string;
}

export interface MetricSummary {
  name: string;
  vital: boolean;
  value_1: ValueSummary;
  /** null when the metric has no value 2. */
  value_2: ValueSummary | null;
}

export interface ProfileSummary {
  name: string;
  legacy_names: string[];
  /** A decimal string; null for direct-cellular devices (spec 2.8). */
  sensor_code: string | null;
  connectivity: Profile["connectivity"];
  stores_offline: boolean;
  metrics: MetricSummary[];
}

function valueSummary(value: ValueSpec): ValueSummary {
  return { meaning: value.meaning, units: value.units };
}

export function summarizeProfile(profile: Profile): ProfileSummary {
  return {
    name: profile.name,
    legacy_names: [...profile.legacy_names],
    sensor_code: profile.sensor_code,
    connectivity: profile.connectivity,
    stores_offline: profile.stores_offline,
    metrics: profile.metrics.map((metric) => ({
      name: metric.name,
      vital: metric.vital,
      value_1: valueSummary(metric.value_1),
      value_2: metric.value_2 === null ? null : valueSummary(metric.value_2),
    })),
  };
}
