import type { Insertable, Selectable } from "kysely";
import type { Ctx } from "../context.ts";
import { invalid } from "../context.ts";
import { readBool, readNum, readNumOrNull, writeBytesOrNull, writeJson } from "../dialect.ts";
import type { MeasurementsTable } from "../schema.ts";
import type { MeasurementRecord, MeasurementRow, NewMeasurement } from "../types-ingest.ts";

/** The columns of a MeasurementRecord, in the order a measurement GET renders them. */
export const RECORD_COLUMNS = [
  "id",
  "metric",
  "device_name",
  "device_id",
  "patient_external_id",
  "hardware_uuid",
  "sensor_code",
  "value_1",
  "value_2",
  "created",
  "timestamp",
  "timezone_offset",
  "estimated_timestamp",
  "filter_params",
] as const;

export type RecordColumns = Pick<Selectable<MeasurementsTable>, (typeof RECORD_COLUMNS)[number]>;

export function toMeasurementRecord(ctx: Ctx, r: RecordColumns): MeasurementRecord {
  return {
    id: readNum(r.id),
    metric: r.metric,
    deviceName: r.device_name,
    deviceId: r.device_id,
    patientExternalId: r.patient_external_id,
    hardwareUuid: r.hardware_uuid,
    sensorCode: r.sensor_code,
    value1: readNum(r.value_1),
    value2: readNumOrNull(r.value_2),
    created: readNum(r.created),
    timestamp: readNum(r.timestamp),
    timezoneOffset: readNum(r.timezone_offset),
    estimatedTimestamp: readBool(r.estimated_timestamp),
    filterParams: ctx.d.readJson(r.filter_params) as MeasurementRecord["filterParams"],
  };
}

/** The audit columns a webhook's read leaves out (webhook-outbox.ts), null in the row; and the dedupe key's device_timestamp, which no row carries. */
type AuditColumns = "message_id" | "characteristic_uuid" | "raw" | "device_timestamp";

/**
 * The record's own object, given the row's other fields: not a spread copy of it. On Node 20's
 * V8 each key added to a spread copy costs microseconds (20 µs for this row, against 0.7 µs
 * this way, measured), and this runs for every record a webhook or the rows query reads.
 */
export function toMeasurementRow(
  ctx: Ctx,
  r: Omit<Selectable<MeasurementsTable>, AuditColumns> &
    Partial<Pick<Selectable<MeasurementsTable>, AuditColumns>>,
): MeasurementRow {
  return Object.assign(toMeasurementRecord(ctx, r), {
    accountId: r.account_id,
    source: r.source,
    sensorId: r.sensor_id,
    measurementIndex: readNumOrNull(r.measurement_index),
    deviceLogIndex: readNumOrNull(r.device_log_index),
    messageId: r.message_id ?? null,
    characteristicUuid: r.characteristic_uuid ?? null,
    raw: r.raw === null || r.raw === undefined ? null : new Uint8Array(r.raw),
  });
}

/**
 * Last part of the dedupe key (DESIGN "Uplink": device, metric, the device's timestamp, measurement_index or
 * device_log_index). 0 when the record has neither: both are positive integers (spec 2.8), and one device type
 * always sends the same kind.
 */
export function dedupeIndexOf(m: NewMeasurement): number {
  return m.measurementIndex ?? m.deviceLogIndex ?? 0;
}

export function dedupeKey(m: {
  source: string;
  metric: string;
  timestamp: number;
  dedupeIndex: number;
}): string {
  return `${m.source}\u0000${m.metric}\u0000${m.timestamp}\u0000${m.dedupeIndex}`;
}

/** PostgreSQL's `integer` (timezone_offset's column): 32 bits, where SQLite's holds 64. */
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function checkInt(
  field: string,
  value: number | null,
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
): void {
  if (value !== null && !(Number.isSafeInteger(value) && value >= min && value <= max)) {
    const range =
      max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : min > 0 ? ` >= ${min}` : "";
    throw invalid(`${field} must be an integer${range}`, { field, value });
  }
}

/** Rejects what one dialect would silently store and the other refuse. */
export function toInsertable(ctx: Ctx, m: NewMeasurement): Insertable<MeasurementsTable> {
  if (m.source === "" || m.metric === "" || m.hardwareUuid === "") {
    throw invalid("source, metric and hardware_uuid are required", { field: "source" });
  }
  if (!Number.isFinite(m.value1) || (m.value2 !== null && !Number.isFinite(m.value2))) {
    throw invalid("value_1 and value_2 must be finite numbers", { field: "value_1" });
  }
  checkInt("timestamp", m.timestamp);
  if (m.deviceTimestamp !== undefined) checkInt("device_timestamp", m.deviceTimestamp);
  checkInt("timezone_offset", m.timezoneOffset, INT32_MIN, INT32_MAX);
  checkInt("measurement_index", m.measurementIndex, 0);
  checkInt("device_log_index", m.deviceLogIndex, 0);
  return {
    account_id: m.accountId,
    device_id: m.deviceId,
    device_name: m.deviceName,
    patient_external_id: m.patientExternalId,
    source: m.source,
    hardware_uuid: m.hardwareUuid,
    sensor_code: m.sensorCode,
    sensor_id: m.sensorId,
    metric: m.metric,
    value_1: m.value1,
    value_2: m.value2,
    timestamp: m.timestamp,
    device_timestamp: m.deviceTimestamp ?? m.timestamp,
    timezone_offset: m.timezoneOffset,
    estimated_timestamp: ctx.d.toBool(m.estimatedTimestamp),
    filter_params: writeJson(m.filterParams),
    measurement_index: m.measurementIndex,
    device_log_index: m.deviceLogIndex,
    dedupe_index: dedupeIndexOf(m),
    message_id: m.messageId,
    characteristic_uuid: m.characteristicUuid,
    raw: writeBytesOrNull(m.raw),
    created: m.created ?? ctx.clock.now(),
  };
}
