import type { GeneratedReading } from "./generated.ts";
import type { MetricRecord } from "./types.ts";

/** Result of dropping what the API would not store twice. */
export interface Deduped {
  readonly readings: GeneratedReading[];
  /** Readings dropped entirely because every record was already stored. */
  readonly droppedReadings: number;
  readonly droppedRecords: number;
}

function key(device: string, timestamp: number, record: MetricRecord): string {
  const p = record.filter_params;
  const index = p?.measurement_index ?? p?.device_log_index ?? "";
  return `${device}\u0000${record.metric}\u0000${timestamp}\u0000${String(index)}`;
}

/**
 * Drops records the API already holds, by the ingestion rule (DESIGN "Uplink": device, metric,
 * timestamp and measurement_index / device_log_index), so the output shows what a client reads
 * back from the API: a device's re-sends appear once.
 */
export function dropStored(readings: readonly GeneratedReading[]): Deduped {
  const seen = new Set<string>();
  const out: GeneratedReading[] = [];
  let droppedReadings = 0;
  let droppedRecords = 0;
  for (const reading of readings) {
    const fresh = reading.records.filter((r) => {
      const k = key(reading.device, reading.timestamp, r);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    droppedRecords += reading.records.length - fresh.length;
    if (fresh.length === 0) droppedReadings++;
    else
      out.push(fresh.length === reading.records.length ? reading : { ...reading, records: fresh });
  }
  return { readings: out, droppedReadings, droppedRecords };
}
