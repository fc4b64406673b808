import { z } from "zod";
import type { SupplyCatalogue } from "../../asr/supply-catalogue.ts";
import type { Catalogue } from "../../catalogue/catalogue.ts";
import type { MetricSpec, Profile } from "../../catalogue/schema.ts";
import { nameUuid } from "../../fulfilment/identifiers.ts";
import { toJsonSchema } from "../json-schema.ts";

/**
 * hwi-device-types elements (wire-formats "Devices"): `{id, name, sensor_code, sku, modules,
 * supply_types, metrics}`, from the catalogue's profiles (spec 2.8). Decisions (spec: not
 * shown): ids are UUID v5 of the name (stable across runs and labs; a metric has one id whatever
 * the type); `modules` names how the type connects (`gateway` or `cellular`); `supply_types` lists
 * the ids of the ASR supply types that fit the type (asr/supply-types, profiles/supplies.yaml),
 * deprecated ones included, in catalogue order, empty for a type without supplies; a metric's
 * primary/secondary names and units are its value 1 and value 2, `unified_display_name` its
 * display name, and `time_series_data` is true for measured quantities and false for flag events
 * (units "flag").
 */

const MetricOut = z.object({
  id: z.string(),
  name: z.string().describe("API format name (spec 2.8), as measurements carry it."),
  is_vital: z.boolean(),
  primary_display_name: z.string().describe("What value_1 holds."),
  primary_units: z.string(),
  secondary_display_name: z.string().nullable().describe("What value_2 holds; null when none."),
  secondary_units: z.string().nullable(),
  time_series_data: z
    .boolean()
    .describe("A measured quantity (true) rather than a flag event (false)."),
  unified_display_name: z.string(),
});

export const DeviceTypeOut = z.object({
  id: z.string(),
  name: z.string().describe("The name to activate devices with (POST hwi-devices device.name)."),
  sensor_code: z.string().nullable().describe("A string; null for direct-cellular types."),
  sku: z.string(),
  modules: z.array(z.string()).describe('How the type connects: ["gateway"] or ["cellular"].'),
  supply_types: z
    .array(z.string())
    .describe(
      "Ids of the ASR supply types that fit the type (asr/supply-types/), deprecated ones included; empty when none.",
    ),
  metrics: z.array(MetricOut),
});

export type DeviceTypeJson = z.output<typeof DeviceTypeOut>;
export const DEVICE_TYPES_JSON_SCHEMA = toJsonSchema(z.array(DeviceTypeOut));

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function metricJson(m: MetricSpec): z.output<typeof MetricOut> {
  return {
    id: nameUuid(`metric:${m.name}`),
    name: m.name,
    is_vital: m.vital,
    primary_display_name: capitalised(m.value_1.meaning),
    primary_units: m.value_1.units,
    secondary_display_name: m.value_2 === null ? null : capitalised(m.value_2.meaning),
    secondary_units: m.value_2?.units ?? null,
    time_series_data: m.value_1.units !== "flag",
    unified_display_name: m.display_name,
  };
}

export function deviceTypeJson(p: Profile, supplies: SupplyCatalogue): DeviceTypeJson {
  return {
    id: nameUuid(`device-type:${p.name}`),
    name: p.name,
    sensor_code: p.sensor_code,
    sku: p.sku,
    modules: [p.connectivity],
    supply_types: supplies.forDevice(p.name).map((t) => t.id),
    metrics: p.metrics.map(metricJson),
  };
}

/** Every current name, by name; legacy names are accepted on activation but not listed. */
export function deviceTypesJson(catalogue: Catalogue, supplies: SupplyCatalogue): DeviceTypeJson[] {
  return catalogue.profiles.map((p) => deviceTypeJson(p, supplies));
}
