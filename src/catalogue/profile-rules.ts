/**
 * Rules of a device profile that relate several fields (spec 2.8). They run on the partly parsed
 * value even when some field failed its own check (so one validation run reports everything), so
 * they read the value defensively and skip whatever is not yet the right shape.
 */

export interface RuleIssue {
  path: Array<string | number>;
  message: string;
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** The profile's metrics with their index, skipping entries that are not objects. */
function metricsOf(profile: Obj): Array<{ metric: Obj; i: number }> {
  return list(profile.metrics).flatMap((metric, i) => (isObj(metric) ? [{ metric, i }] : []));
}

function filterParamRules(profile: Obj): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const defined = new Map<string, Obj>();
  list(profile.filter_params).forEach((param, i) => {
    const key = isObj(param) ? text(param.key) : undefined;
    if (key === undefined || !isObj(param)) return;
    if (defined.has(key)) {
      issues.push({
        path: ["filter_params", i, "key"],
        message: `duplicate filter param "${key}"`,
      });
    }
    defined.set(key, param);
  });
  const used = new Set<string>();
  for (const { metric, i } of metricsOf(profile)) {
    list(metric.filter_params).forEach((key, j) => {
      if (typeof key !== "string") return;
      used.add(key);
      if (!defined.has(key)) {
        issues.push({
          path: ["metrics", i, "filter_params", j],
          message: `filter param "${key}" is not defined in the profile's filter_params`,
        });
      }
    });
  }
  list(profile.filter_params).forEach((param, i) => {
    const key = isObj(param) ? text(param.key) : undefined;
    if (key !== undefined && !used.has(key)) {
      issues.push({
        path: ["filter_params", i, "key"],
        message: `filter param "${key}" is defined but no metric carries it`,
      });
    }
  });
  issues.push(...flagsRules(profile, defined));
  return issues;
}

/** Inhaler flags (spec 2.8): by_metric names exactly the metrics that carry the flags key. */
function flagsRules(profile: Obj, defined: Map<string, Obj>): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const metrics = metricsOf(profile);
  list(profile.filter_params).forEach((param, i) => {
    if (!isObj(param) || param.kind !== "flags" || !isObj(param.by_metric)) return;
    const key = text(param.key);
    if (key === undefined || defined.get(key) !== param) return;
    for (const name of Object.keys(param.by_metric)) {
      const carrier = metrics.find(({ metric }) => metric.name === name);
      if (carrier === undefined || !list(carrier.metric.filter_params).includes(key)) {
        issues.push({
          path: ["filter_params", i, "by_metric", name],
          message: `flags are listed for ${name}, but no metric ${name} carries "${key}"`,
        });
      }
    }
    for (const { metric, i: m } of metrics) {
      const name = text(metric.name);
      if (
        name !== undefined &&
        list(metric.filter_params).includes(key) &&
        !(name in param.by_metric)
      ) {
        issues.push({
          path: ["metrics", m, "filter_params"],
          message: `${name} carries "${key}" but filter_params.${key}.by_metric has no entry for it`,
        });
      }
    }
  });
  return issues;
}

/** Glucometer HI reading (spec 2.8 alert): the flag must be a value of a key the metric carries. */
function aboveRangeRules(profile: Obj): RuleIssue[] {
  const issues: RuleIssue[] = [];
  for (const { metric, i } of metricsOf(profile)) {
    const above = metric.above_range;
    if (!isObj(above)) continue;
    const key = text(above.filter_param);
    if (key !== undefined && !list(metric.filter_params).includes(key)) {
      issues.push({
        path: ["metrics", i, "above_range", "filter_param"],
        message: `"${key}" is not among this metric's filter_params`,
      });
    }
    const param = list(profile.filter_params).find((p) => isObj(p) && p.key === key);
    if (isObj(param) && !(param.kind === "enum" && list(param.values).includes(above.value))) {
      issues.push({
        path: ["metrics", i, "above_range", "value"],
        message: `"${String(above.value)}" is not an allowed value of filter param "${key}"`,
      });
    }
    const max = isObj(metric.value_1) ? metric.value_1.max : undefined;
    if (typeof max === "number" && above.reported_as !== max) {
      issues.push({
        path: ["metrics", i, "above_range", "reported_as"],
        message: `an above-range reading is reported as the top of the range, value_1.max (${max})`,
      });
    }
  }
  return issues;
}

/**
 * Spec 2.8: direct-cellular types have no sensor code, no sensor ids and no gateway. Each rule
 * runs only when the fields it relates are present, so a missing field is reported once, by the
 * schema, and not again as a contradiction.
 */
function connectivityRules(profile: Obj): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const cellular = profile.connectivity === "cellular";
  if (profile.connectivity !== "gateway" && !cellular) return issues;
  const perGateway = text(profile.per_gateway);
  if (profile.sensor_code !== undefined && cellular !== (profile.sensor_code === null)) {
    issues.push({
      path: ["sensor_code"],
      message: "direct-cellular devices have no sensor code; gateway devices must have one",
    });
  }
  if (typeof profile.identity === "string" && cellular !== (profile.identity === "imei")) {
    issues.push({
      path: ["identity"],
      message: "cellular devices are identified by IMEI, gateway devices by their gateway",
    });
  }
  if (perGateway !== undefined && cellular !== (perGateway === "none")) {
    issues.push({
      path: ["per_gateway"],
      message: "per_gateway is none exactly for direct-cellular devices, which have no gateway",
    });
  }
  const sensorIdRequired = isObj(profile.sensor_id) ? profile.sensor_id.required : undefined;
  if (cellular && sensorIdRequired === true) {
    issues.push({
      path: ["sensor_id", "required"],
      message: "direct-cellular devices have no sensor ids",
    });
  }
  if (
    typeof sensorIdRequired === "boolean" &&
    perGateway !== undefined &&
    (perGateway === "many_by_sensor_id") !== sensorIdRequired
  ) {
    issues.push({
      path: ["sensor_id", "required"],
      message: "a sensor id is required exactly when per_gateway is many_by_sensor_id",
    });
  }
  return issues;
}

function metricRules(profile: Obj): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const seen = new Set<string>();
  for (const { metric, i } of metricsOf(profile)) {
    const name = text(metric.name);
    if (name !== undefined && seen.has(name)) {
      issues.push({ path: ["metrics", i, "name"], message: `duplicate ${name}` });
    }
    if (name !== undefined) seen.add(name);
    // The vital flag and the vital category say the same thing; keep them from drifting apart.
    if (typeof metric.vital === "boolean" && typeof metric.category === "string") {
      if (metric.vital !== (metric.category === "vital")) {
        issues.push({
          path: ["metrics", i, "category"],
          message: "category is vital exactly when the metric is vital",
        });
      }
    }
  }
  return issues;
}

function deviceRules(profile: Obj): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const cuff = list(profile.cuff_cm);
  const family = text(profile.family);
  if (
    profile.cuff_cm !== undefined &&
    family !== undefined &&
    family !== "blood_pressure_monitor"
  ) {
    issues.push({ path: ["cuff_cm"], message: "only blood pressure monitors have a cuff size" });
  }
  const [low, high] = cuff;
  if (typeof low === "number" && typeof high === "number" && !(low > 0 && low < high)) {
    issues.push({ path: ["cuff_cm"], message: "cuff range is [smallest, largest] in cm" });
  }
  const keys = new Set<string>();
  list(profile.device_properties).forEach((property, i) => {
    const key = isObj(property) ? text(property.key) : undefined;
    if (key !== undefined && keys.has(key)) {
      issues.push({ path: ["device_properties", i, "key"], message: `duplicate ${key}` });
    }
    if (key !== undefined) keys.add(key);
  });
  return issues;
}

/** Properties a characteristic of a role must have, by the SIG service that defines it. */
const REQUIRED_PROPERTIES: Record<string, { name: string; properties: string[]; clause: string }> =
  {
    time: { name: "Current Time (2A2B)", properties: ["read", "notify"], clause: "CTS 1.1 §3.1" },
  };

function gattRules(profile: Obj): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const characteristics = isObj(profile.gatt) ? list(profile.gatt.characteristics) : [];
  characteristics.forEach((c, i) => {
    const required = isObj(c) ? REQUIRED_PROPERTIES[text(c.role) ?? ""] : undefined;
    if (!isObj(c) || required === undefined) return;
    const has = list(c.properties);
    const missing = required.properties.filter((p) => !has.includes(p));
    if (missing.length === 0) return;
    issues.push({
      path: ["gatt", "characteristics", i, "properties"],
      message: `${required.name} must have ${required.properties.join(" and ")} (${required.clause}); it lacks ${missing.join(" and ")}`,
    });
  });
  return issues;
}

/** Every cross-field problem of a (possibly partly invalid) profile value. */
export function profileRuleIssues(value: unknown): RuleIssue[] {
  if (!isObj(value)) return [];
  return [
    ...connectivityRules(value),
    ...metricRules(value),
    ...filterParamRules(value),
    ...aboveRangeRules(value),
    ...deviceRules(value),
    ...gattRules(value),
  ];
}
