import type { Profile } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";
import { PAST_YEAR_9999_MS, YEAR_1_MS } from "../core/time.ts";
import { valuesSayClockNotSet } from "../gatt/clock-not-set.ts";
import { type CharacteristicValue, mappingFor } from "../gatt/mapping.ts";
import { canonicalUuid } from "../gatt/uuids.ts";
import { VENDOR_RECORD_HEADER_LENGTH } from "../gatt/vendor/record.ts";
import { metricOfRecordType } from "../gatt/vendor/record-types.ts";
import type { Uplink, UplinkReading } from "../mqtt/uplink.ts";
import type { NewMeasurement } from "../store/types-ingest.ts";
import type { Resolved } from "./resolve.ts";

type Role = Profile["gatt"]["characteristics"][number]["role"];

const rolesByProfile = new WeakMap<Profile, ReadonlyMap<string, Role>>();

function rolesOf(profile: Profile): ReadonlyMap<string, Role> {
  let roles = rolesByProfile.get(profile);
  if (roles === undefined) {
    roles = new Map(profile.gatt.characteristics.map((c) => [canonicalUuid(c.uuid), c.role]));
    rolesByProfile.set(profile, roles);
  }
  return roles;
}

/** Byte 8 of a Vendor Record is its record type, i.e. its metric (vendor/record.ts). */
const RECORD_TYPE_OFFSET = VENDOR_RECORD_HEADER_LENGTH - 1;

/**
 * The characteristic value a record's value came from, kept with the row for audit (DESIGN
 * "Uplink"): a Vendor Record carries one metric each; on SIG profiles battery_percentage comes
 * from Battery Level and every other metric from the measurement characteristic (context
 * characteristics only add filter params).
 */
function provenance(
  values: readonly CharacteristicValue[],
  profile: Profile,
): (metric: string) => CharacteristicValue | undefined {
  const roles = rolesOf(profile);
  const byRole = new Map<Role, CharacteristicValue>();
  const records = new Map<string, CharacteristicValue>();
  for (const v of values) {
    const role = roles.get(v.uuid);
    if (role === undefined) continue;
    if (role === "record") {
      const metric = metricOfRecordType(v.value[RECORD_TYPE_OFFSET] ?? -1);
      if (metric !== undefined && !records.has(metric)) records.set(metric, v);
    } else if (!byRole.has(role)) byRole.set(role, v);
  }
  return (metric) =>
    records.get(metric) ??
    (metric === "battery_percentage" ? byRole.get("battery") : undefined) ??
    byRole.get("measurement");
}

const positiveInt = (v: unknown): number | null =>
  typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : null;

/**
 * Decodes one reading with the shared codecs (src/gatt) and builds its measurement rows: values,
 * filter params, device time and offset, the dedupe key (source = the device's address or IMEI;
 * index = measurement_index or device_log_index), receipt time, raw bytes. Throws the codec's
 * error, which names the field and byte at fault; hands `leftOut` the error of each record the
 * codec left out while keeping the reading's others (DecodedReading.leftOut).
 */
export function readingRows(
  uplink: Uplink,
  reading: UplinkReading,
  resolved: Resolved,
  created: number,
  leftOut?: (error: RpmlabError) => void,
): NewMeasurement[] {
  const { profile, device } = resolved;
  // A measurement without its optional time stamp (a device with no clock) is dated at the
  // gateway's receive time, estimated (valuesSayClockNotSet says so too).
  const decoded = mappingFor(profile).decode(reading.values, profile, reading.receivedAt);
  for (const error of decoded.leftOut ?? []) leftOut?.(error);
  const source = uplink.source;
  const origin = provenance(reading.values, profile);
  // Spec wire-formats "Measurement record" estimated_timestamp: a device whose clock was unset
  // when it took the reading (the gateway says so, `clock_unset`, or the values do: PLX flags
  // bit 4) stamped it with a guess; the reading is stored at the gateway's receive time
  // instead, flagged as estimated.
  const estimated = reading.clockUnset || valuesSayClockNotSet(reading.values);
  const timestamp = estimated ? reading.receivedAt : decoded.timestamp;
  if (timestamp < YEAR_1_MS || timestamp >= PAST_YEAR_9999_MS) {
    // Every read of it writes four-digit years (wire-formats), and no time filter reaches
    // before year 1: refused, not stored out of reach.
    throw new RpmlabError(
      "E_MQTT_PAYLOAD",
      `the reading's time, ${estimated ? "received_at" : "the device's time in UTC"}, is ${timestamp < YEAR_1_MS ? "before 0001-01-01T00:00:00Z" : "past 9999-12-31T23:59:59.999999Z"}`,
      { field: estimated ? "received_at" : "values" },
    );
  }
  return decoded.records.map((record) => {
    const params = record.filter_params;
    const serial = params?.serial_number;
    if (reading.sensorId !== null && typeof serial === "string" && serial !== reading.sensorId) {
      throw new RpmlabError(
        "E_MQTT_PAYLOAD",
        `sensor_id ${reading.sensorId} differs from the serial_number ${serial} the device sent`,
        { field: "sensor_id" },
      );
    }
    const raw = origin(record.metric);
    return {
      accountId: resolved.accountId,
      deviceId: device?.id ?? null,
      // An IMEI's orphan keeps the type its device named (OrphanMatch.deviceName).
      deviceName: device?.name ?? (source.kind === "cellular" ? profile.name : null),
      patientExternalId: resolved.patientExternalId,
      source: source.kind === "gateway" ? reading.deviceAddress! : source.imei,
      hardwareUuid: source.kind === "gateway" ? source.gatewayUuid : source.imei,
      sensorCode: reading.sensorCode,
      sensorId: reading.sensorId ?? (typeof serial === "string" ? serial : null),
      metric: record.metric,
      value1: record.value_1,
      value2: record.value_2,
      timestamp,
      deviceTimestamp: decoded.timestamp,
      timezoneOffset: decoded.timezone_offset,
      estimatedTimestamp: estimated,
      filterParams: params,
      measurementIndex: positiveInt(params?.measurement_index),
      deviceLogIndex: positiveInt(params?.device_log_index),
      messageId: uplink.messageId,
      characteristicUuid: raw?.uuid ?? null,
      raw: raw?.value ?? null,
      created,
    };
  });
}
