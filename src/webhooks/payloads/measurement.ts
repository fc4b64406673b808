import { type MeasurementJson, measurementJson } from "../../api/schemas/measurement.ts";
import type { MeasurementRow } from "../../store/types-ingest.ts";

/**
 * The measurement webhook record (wire-formats "Measurement record"): the GET record without
 * `id` and `metric_type`, in the sample's key order, with `created` repeating `timestamp` — the
 * real service keeps that in its webhooks for backwards compatibility — and `hardware_uuid` the
 * device's current gateway or IMEI, null once unlinked (spec 6.2), where GET shows the one the
 * reading came through. `hardwareUuid` defaults to that one (a reading with no device).
 */
export type MeasurementWebhookRecord = Omit<
  MeasurementJson,
  "id" | "metric_type" | "hardware_uuid"
> & { hardware_uuid: string | null };

export function measurementWebhookRecord(
  row: MeasurementRow,
  hardwareUuid: string | null = row.hardwareUuid,
): MeasurementWebhookRecord {
  const { id: _id, metric_type: _type, ...record } = measurementJson(row);
  return { ...record, hardware_uuid: hardwareUuid, created: record.timestamp };
}

/**
 * Which physical reading a record belongs to (wire-formats: `post_as_array` sends "the
 * coincident records of one physical reading" as one array): the same device and timestamp, and
 * the same measurement_index (BPM, oximeter…) or device_log_index (inhaler) when it has one.
 */
export function readingKey(row: MeasurementRow): string {
  const index = row.measurementIndex ?? row.deviceLogIndex;
  return `${row.deviceId ?? row.source}|${row.timestamp}|${index ?? ""}`;
}

/**
 * Records in groups of one physical reading each, in the order their first record came. A
 * reading has each metric once: a record whose metric its key's group holds already starts the
 * next group — readings taken with an unset clock are all stored at the gateway's receive time,
 * and a device with no index (a scale) gives them one key.
 */
export function byReading(rows: readonly MeasurementRow[]): MeasurementRow[][] {
  const groups: MeasurementRow[][] = [];
  const open = new Map<string, MeasurementRow[]>();
  for (const row of rows) {
    const key = readingKey(row);
    const group = open.get(key);
    if (group !== undefined && !group.some((r) => r.metric === row.metric)) {
      group.push(row);
      continue;
    }
    const next = [row];
    open.set(key, next);
    groups.push(next);
  }
  return groups;
}
