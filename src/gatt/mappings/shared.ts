import type { Profile } from "../../catalogue/schema.ts";
import { isRpmlabError, RpmlabError } from "../../core/errors.ts";
import { MS_PER_HOUR } from "../../core/time.ts";
import type {
  FilterParams,
  FilterParamValue,
  MetricRecord,
  PhysicalReading,
} from "../../readings/types.ts";
import { type DateTime, dateTimeFromEpochMs, epochMsFromDateTime } from "../date-time.ts";
import { checkParamValue } from "../filter-values.ts";
import { type Grid, gridValue, nearestOnGrid } from "../grid.ts";
import type { CharacteristicValue } from "../mapping.ts";
import type { Medfloat } from "../medfloat.ts";
import { canonicalUuid } from "../uuids.ts";
import { TIMEZONE_MAX, TIMEZONE_MIN } from "../vendor/reading-context.ts";
import { type CompiledMetric, type CompiledProfile, compile } from "./compiled.ts";

/** Helpers every mapping shares: a reading's records by metric, time, filter params, values. */

export function mappingError(what: string, field: string, message: string): RpmlabError {
  return new RpmlabError("E_CODEC_MAPPING", `${what}: ${field}: ${message}`, { field });
}

/** GSS User ID (BLS 1.1 Blood Pressure Measurement, WSS 1.0 Weight Measurement): 0xFF. */
export const UNKNOWN_USER = 0xff;

/**
 * What rpmlab does with the User ID of a multi-user device (README "Bluetooth LE"): a device is
 * one patient's, so a known user's reading (0–254) is that patient's and the User ID is not
 * kept (no measurement field holds it); a reading for the unknown user (0xFF: nobody the device
 * knows took it) is refused, naming the byte, rather than stored as the patient's.
 */
export function refuseUnknownUser(userId: number | undefined, what: string, offset: number): void {
  if (userId !== UNKNOWN_USER) return;
  throw new RpmlabError(
    "E_CODEC_RESERVED",
    `${what}: user_id at byte ${offset}: 0xFF, the unknown user: the device did not know who took this reading, so it is not the patient's`,
    { field: "user_id", offset },
  );
}

/**
 * The compiled profile, after checking once that the mapping carries every metric and filter
 * param it holds (E_CODEC_MAPPING naming the first it cannot carry).
 */
export function carried(
  profile: Profile,
  mapping: string,
  metrics: ReadonlySet<string>,
  params: ReadonlySet<string>,
): CompiledProfile {
  const c = compile(profile);
  if (c.carriedBy === mapping) return c;
  for (const metric of profile.metrics) {
    if (!metrics.has(metric.name)) {
      throw mappingError(
        mapping,
        "metrics",
        `${profile.name} has ${metric.name}, which ${mapping} cannot carry`,
      );
    }
    for (const key of metric.filter_params) {
      if (!params.has(key)) {
        throw mappingError(
          mapping,
          `${metric.name}.filter_params`,
          `${mapping} cannot carry filter param ${key}`,
        );
      }
    }
  }
  c.carriedBy = mapping;
  return c;
}

/**
 * The reading's records in slots by the profile's metric index, each checked to carry exactly
 * its metric's filter params (valid for the profile). Records must be metrics of the profile,
 * each at most once, in the profile's order (so decode can give them back as they were).
 */
export function slotRecords(
  reading: PhysicalReading,
  c: CompiledProfile,
  what: string,
): Array<MetricRecord | undefined> {
  const slots: Array<MetricRecord | undefined> = [];
  for (let i = 0; i < c.metrics.length; i++) slots.push(undefined);
  let last = -1;
  for (const record of reading.records) {
    const m = c.byName.get(record.metric);
    if (m === undefined) {
      throw mappingError(what, "records", `${record.metric} is not a metric of ${c.profile.name}`);
    }
    if (m.index <= last) {
      throw mappingError(
        what,
        "records",
        `${record.metric} is repeated or out of the profile's metric order`,
      );
    }
    checkRecordParams(record, m, what);
    slots[m.index] = record;
    last = m.index;
  }
  return slots;
}

/**
 * Checks that a record carries exactly its metric's filter params, each valid for the profile: no
 * others, each required one present (enums with presence when_applicable may be absent), null
 * when the metric has none.
 */
function checkRecordParams(record: MetricRecord, m: CompiledMetric, what: string): void {
  const params = record.filter_params;
  if (m.params.length === 0) {
    if (params !== null) {
      throw mappingError(what, `${m.name}.filter_params`, `${m.name} carries none; use null`);
    }
    return;
  }
  if (params === null) {
    throw mappingError(
      what,
      `${m.name}.filter_params`,
      `missing (${m.spec.filter_params.join(", ")})`,
    );
  }
  let count = 0;
  for (const p of m.params) {
    const value = params[p.key];
    if (value !== undefined) {
      count++;
      if (p.spec !== undefined) checkParamValue(p.spec, m.name, value, what, p.field);
    } else if (!p.optional) {
      throw mappingError(what, p.field, "missing");
    }
  }
  if (count !== Object.keys(params).length) {
    throw mappingError(
      what,
      `${m.name}.filter_params`,
      `has keys ${Object.keys(params).join(", ")}; ${m.name} carries ${m.spec.filter_params.join(", ")}`,
    );
  }
}

/**
 * The value of filter param `key` shared by every record that carries it (measurement_index: one
 * per physical reading; already checked by slotRecords); undefined when no record carries it.
 */
export function sharedParam(
  slots: ReadonlyArray<MetricRecord | undefined>,
  c: CompiledProfile,
  key: string,
  what: string,
): FilterParamValue | undefined {
  let value: FilterParamValue | undefined;
  for (let i = 0; i < slots.length; i++) {
    const v = slots[i]?.filter_params?.[key];
    if (v === undefined) continue;
    if (value === undefined) value = v;
    else if (v !== value) {
      throw mappingError(
        what,
        `${c.metrics[i]!.name}.filter_params.${key}`,
        `${String(v)} differs from ${String(value)} on another record of the reading`,
      );
    }
  }
  return value;
}

/**
 * The filter_params of a decoded record of metric `m`: each of its keys from `source`, checked
 * against the profile; null when it has none. A key the values do not carry is left out: a
 * standard SIG peripheral sends no rpmlab Reading Context (so no measurement_index) and may send
 * no Glucose Measurement Context (so no meal_context), and its reading is still a reading.
 * rpmlab's own devices always send them (the encoder checks every record against the profile).
 */
export function buildParams(
  m: CompiledMetric,
  source: Readonly<Record<string, FilterParamValue | undefined>>,
  what: string,
): FilterParams | null {
  let params: Record<string, FilterParamValue> | null = null;
  for (const p of m.params) {
    const value = source[p.key];
    if (value === undefined) continue;
    params ??= {};
    params[p.key] =
      p.spec === undefined ? value : checkParamValue(p.spec, m.name, value, what, p.field);
  }
  return params;
}

export function checkTimezone(offset: number, what: string): void {
  if (!Number.isInteger(offset) || offset < TIMEZONE_MIN || offset > TIMEZONE_MAX) {
    throw new RpmlabError(
      "E_CODEC_RANGE",
      `${what}: timezone_offset ${offset} h is not a whole hour from -12 to +14`,
      { field: "timezone_offset" },
    );
  }
}

/** The Date Time a device clock shows at the reading's time: local time, UTC + offset. */
export function localDateTime(reading: PhysicalReading, what: string): DateTime {
  checkTimezone(reading.timezone_offset, what);
  return dateTimeFromEpochMs(
    reading.timestamp + reading.timezone_offset * MS_PER_HOUR,
    what,
    "timestamp",
  );
}

/**
 * UTC epoch ms of a device's local Date Time, read from byte `at` of its value (plus
 * `extraMinutes`, the glucose time offset).
 */
export function utcOf(
  dt: DateTime,
  offsetHours: number,
  what: string,
  field: string,
  at: number,
  extraMinutes = 0,
): number {
  const local = epochMsFromDateTime(dt, what, field, at);
  return local + extraMinutes * 60_000 - offsetHours * MS_PER_HOUR;
}

/**
 * The values of `values` for each of `uuids`, in that order (undefined when absent). A value of
 * another UUID, or two of one UUID, fails with E_CODEC_MAPPING.
 */
export function pickValues(
  values: readonly CharacteristicValue[],
  uuids: readonly string[],
  what: string,
): Array<Uint8Array | undefined> {
  const picked: Array<Uint8Array | undefined> = [];
  for (let i = 0; i < uuids.length; i++) picked.push(undefined);
  for (const v of values) {
    let i = uuids.indexOf(v.uuid);
    if (i < 0) i = uuids.indexOf(canonicalUuid(v.uuid));
    if (i < 0)
      throw mappingError(what, "uuid", `${v.uuid} is not a characteristic of this mapping`);
    if (picked[i] !== undefined) throw mappingError(what, "uuid", `two values of ${uuids[i]}`);
    picked[i] = v.value;
  }
  return picked;
}

/** `v` as a number; E_CODEC_RESERVED naming the field and byte offset for a special value. */
export function needNumber(v: Medfloat, what: string, field: string, offset: number): number {
  if (typeof v === "number") return v;
  throw new RpmlabError(
    "E_CODEC_RESERVED",
    `${what}: ${field} at byte ${offset}: SFLOAT ${v.special} where the metric needs a number`,
    { field, offset },
  );
}

/** value_1 of a record, canonical and checked against the metric's range and step. */
export function value1Of(record: MetricRecord, m: CompiledMetric, what: string): number {
  return gridValue(record.value_1, m.value1, what, m.field1);
}

/** value_2 of a record whose metric has one; E_CODEC_RANGE when it is null or off the grid. */
export function value2Of(record: MetricRecord, m: CompiledMetric, what: string): number {
  if (m.value2 === null) {
    throw mappingError(what, `${m.name}.value_2`, `the profile defines no value 2 for ${m.name}`);
  }
  if (record.value_2 === null) {
    throw new RpmlabError("E_CODEC_RANGE", `${what}: ${m.name}.value_2: missing (null)`, {
      field: `${m.name}.value_2`,
    });
  }
  return gridValue(record.value_2, m.value2, what, m.field2);
}

/** Fails unless value_2 is null, for metrics that carry only value 1 on this mapping. */
export function noValue2(record: MetricRecord, what: string): void {
  if (record.value_2 !== null) {
    throw new RpmlabError(
      "E_CODEC_RANGE",
      `${what}: ${record.metric}.value_2: ${record.value_2} where ${record.metric} has no value 2 (null)`,
      { field: `${record.metric}.value_2` },
    );
  }
}

/**
 * A decoded number converted from other units (kPa, kg, mol/L), rounded to the grid's step, then
 * range checked.
 */
export function convertedValue(
  v: number,
  grid: Grid,
  what: string,
  field: string,
  offset: number,
): number {
  return gridValue(nearestOnGrid(v, grid), grid, what, field, offset);
}

/**
 * `value()`, or undefined when it is past the profile's range or off its step (E_CODEC_RANGE),
 * the error then kept in `leftOut`: for a value measured with a reading's main one (a cuff's
 * pulse, an oximeter's pulse or perfusion index), which is left out while the rest is kept.
 */
export function unlessOutOfRange(leftOut: RpmlabError[], value: () => number): number | undefined {
  try {
    return value();
  } catch (error) {
    if (!isRpmlabError(error, "E_CODEC_RANGE")) throw error;
    leftOut.push(error);
    return undefined;
  }
}
