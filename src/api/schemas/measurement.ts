import { z } from "zod";
import { toIsoMicros } from "../../core/time.ts";
import type { MeasurementRecord } from "../../store/types-ingest.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  FIELD_ERRORS_SCHEMA,
  iso,
  toJsonSchema,
} from "../json-schema.ts";
import { listSchemas } from "../pagination.ts";

/**
 * A measurement as every measurement GET returns it (spec 2.5; wire-formats "Measurement
 * record"): the webhook record plus `id` and `metric_type`. Values are strings with two
 * decimals, "0.00" standing for no value 2; sensor_code is a string (null for direct-cellular
 * devices); timestamps ISO with microseconds and Z.
 */
export const MeasurementOut = z.object({
  id: z.number().int().describe("Integer record id (spec 2.5)."),
  metric_type: z.string().describe("The metric name (same as metric)."),
  metric: z.string(),
  device_name: z.string().nullable(),
  hwi_device_id: z.string().nullable(),
  patient_id: z
    .string()
    .nullable()
    .describe("The patient's external_id when the reading was taken (spec 6.2: stable)."),
  hardware_uuid: z.string().describe("The gateway id or IMEI the reading came through."),
  sensor_code: z.string().nullable(),
  value_1: z.string().describe('Two decimals, e.g. "86.00".'),
  value_2: z.string().describe('Two decimals; "0.00" when the metric has no value 2.'),
  created: iso().describe("Server receipt time."),
  timestamp: iso().describe("Device clock (spec 2.5: measurement_time), in UTC."),
  timezone_offset: z.number().int().describe("Whole hours."),
  estimated_timestamp: z.boolean(),
  filter_params: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("Per-device-type data (spec 2.8), or null."),
});

export type MeasurementJson = z.output<typeof MeasurementOut>;

export const MEASUREMENT_JSON_SCHEMA = toJsonSchema(MeasurementOut);
export const MEASUREMENT_LISTS = listSchemas(MEASUREMENT_JSON_SCHEMA);

const NO_VALUE = "0.00";

export function measurementJson(m: MeasurementRecord): MeasurementJson {
  return {
    id: m.id,
    metric_type: m.metric,
    metric: m.metric,
    device_name: m.deviceName,
    hwi_device_id: m.deviceId,
    patient_id: m.patientExternalId,
    hardware_uuid: m.hardwareUuid,
    sensor_code: m.sensorCode,
    value_1: m.value1.toFixed(2),
    value_2: m.value2 === null ? NO_VALUE : m.value2.toFixed(2),
    created: toIsoMicros(m.created),
    timestamp: toIsoMicros(m.timestamp),
    timezone_offset: m.timezoneOffset,
    estimated_timestamp: m.estimatedTimestamp,
    filter_params: m.filterParams as Record<string, unknown> | null,
  };
}

/** Responses of a measurement GET; `notFound` says what a 404 means on that route. */
export function measurementResponses(notFound: string) {
  return {
    200: MEASUREMENT_LISTS.either,
    400: describe(FIELD_ERRORS_SCHEMA, "A time parameter that is not ISO 8601, or a bad page."),
    404: describe(DETAIL_SCHEMA, `${notFound}, or a page past the end ("Invalid page.").`),
    ...clientErrorResponses(),
  };
}
