import type { FilterParamSpec, Profile, ValueSpec } from "./schema.ts";
import { formatTable } from "./text-table.ts";

/** Text for `rpmlab profiles list` and `rpmlab profiles show`. */

const yesNo = (flag: boolean) => (flag ? "yes" : "no");

/** One row per profile: name, sensor code ("-" for direct-cellular), connectivity, metrics. */
export function renderProfileList(profiles: readonly Profile[]): string {
  return formatTable(
    ["NAME", "SENSOR CODE", "CONNECTIVITY", "STORES OFFLINE", "METRICS"],
    profiles.map((p) => [
      p.name,
      p.sensor_code ?? "-",
      p.connectivity,
      yesNo(p.stores_offline),
      p.metrics.map((m) => m.name).join(", "),
    ]),
  );
}

/** The note shown when a device was looked up by a legacy name (spec 2.4), else undefined. */
export function legacyNameNote(requested: string, profile: Profile): string | undefined {
  return requested === profile.name
    ? undefined
    : `"${requested}" is a legacy name, mapped to "${profile.name}" (spec 2.4)`;
}

function describeValue(value: ValueSpec | null): string {
  if (value === null) return "-";
  return `${value.meaning} (${value.units}) ${value.min}..${value.max} step ${value.step}`;
}

function describeCadence(cadence: Profile["cadence"]): string {
  switch (cadence.kind) {
    case "per_reading":
      return "whenever a reading is taken";
    case "interval":
      return `every ${cadence.every_hours} hours`;
    case "with_other_device":
      return "only along with another device's metrics";
  }
}

const PER_GATEWAY: Record<Profile["per_gateway"], string> = {
  one_per_sensor_code: "one per sensor code",
  many_by_sensor_id: "several, told apart by sensor id",
  many_with_distinct_sensor_codes: "several, with different sensor codes",
  none: "- (no gateway)",
};

function describeSensorId(sensorId: Profile["sensor_id"]): string {
  if (!sensorId.required) return "not used";
  const what = sensorId.meaning ?? "required";
  return sensorId.pattern === undefined ? what : `${what}, pattern ${sensorId.pattern}`;
}

/** Rows of the filter-params table: flags take one row per metric. */
function filterParamRows(param: FilterParamSpec): string[][] {
  switch (param.kind) {
    case "positive_integer":
      return [[param.key, "positive integer"]];
    case "pattern":
      return [[param.key, `pattern ${param.pattern}`]];
    case "enum": {
      const when = param.presence === "when_applicable" ? " (only when applicable)" : "";
      return [[param.key, `${param.values.join(" | ")}${when}`]];
    }
    case "flags":
      return Object.entries(param.by_metric).map(([metric, flags], i) => [
        i === 0 ? param.key : "",
        `${metric}: ${Object.entries(flags)
          .map(([flag, kind]) => `${flag} (${kind === "bit" ? "0 or 1" : "positive integer"})`)
          .join(", ")}`,
      ]);
  }
}

function fieldLines(profile: Profile): string {
  const rows: string[][] = [
    ["family", profile.family],
    ["sku", profile.sku],
    ["sensor code", profile.sensor_code ?? "- (direct-cellular)"],
    ["connectivity", `${profile.connectivity} (identity: ${profile.identity})`],
    ["stores offline", yesNo(profile.stores_offline)],
    ["sensor id", describeSensorId(profile.sensor_id)],
    ["per gateway", PER_GATEWAY[profile.per_gateway]],
    ["transmits", describeCadence(profile.cadence)],
  ];
  if (profile.cuff_cm !== undefined) {
    rows.push(["cuff", `${profile.cuff_cm[0]} to ${profile.cuff_cm[1]} cm`]);
  }
  rows.push(["legacy names", profile.legacy_names.join(", ") || "-"]);
  rows.push(["properties", profile.device_properties.map((p) => p.key).join(", ") || "-"]);
  return formatTable(["FIELD", "VALUE"], rows);
}

/** Everything a profile says, in sections; `requested` is the name the user typed. */
export function renderProfile(profile: Profile, requested: string = profile.name): string {
  const note = legacyNameNote(requested, profile);
  const metrics = formatTable(
    ["METRIC", "VITAL", "CATEGORY", "EMITTED", "VALUE 1", "VALUE 2", "FILTER PARAMS"],
    profile.metrics.map((m) => [
      m.name,
      yesNo(m.vital),
      m.category,
      m.emitted,
      describeValue(m.value_1),
      describeValue(m.value_2),
      m.filter_params.join(", ") || "-",
    ]),
  );
  const params =
    profile.filter_params.length === 0
      ? "(none)"
      : formatTable(["KEY", "ALLOWED VALUES"], profile.filter_params.flatMap(filterParamRows));
  const gatt = formatTable(
    ["UUID", "SERVICE", "ROLE", "PROPERTIES"],
    profile.gatt.characteristics.map((c) => [
      c.uuid,
      c.service ?? profile.gatt.service,
      c.role,
      c.properties.join(", "),
    ]),
  );
  return [
    profile.name,
    ...(note === undefined ? [] : [note]),
    profile.description,
    "",
    fieldLines(profile),
    "",
    "Metrics",
    metrics,
    "",
    "Filter params",
    params,
    "",
    `GATT (service ${profile.gatt.service}, mapping ${profile.gatt.mapping})`,
    gatt,
  ].join("\n");
}
