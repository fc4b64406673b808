import { type MeasurementJson, measurementJson } from "../../api/schemas/measurement.ts";
import type { MeasurementRow } from "../../store/types-ingest.ts";

/**
 * The measurement webhook record (wire-formats "Measurement record"): the GET record without
 * `id` and `metric_type`, in the sample's key order, with `created` repeating `timestamp` — the
 * real service keeps that in its webhooks for backwards compatibility.
 */
export type MeasurementWebhookRecord = Omit<MeasurementJson, "id" | "metric_type">;

export function measurementWebhookRecord(row: MeasurementRow): MeasurementWebhookRecord {
  const { id: _id, metric_type: _type, ...record } = measurementJson(row);
  return { ...record, created: record.timestamp };
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

/** Records in groups of one physical reading each, in the order their first record came. */
export function byReading(rows: readonly MeasurementRow[]): MeasurementRow[][] {
  const groups = new Map<string, MeasurementRow[]>();
  for (const row of rows) {
    const key = readingKey(row);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [row]);
    else group.push(row);
  }
  return [...groups.values()];
}
