import type { Profile } from "../../catalogue/schema.ts";
import type { RpmlabError } from "../../core/errors.ts";
import type { MetricRecord, PhysicalReading } from "../../readings/types.ts";
import {
  type BloodPressureMeasurement,
  BPM_OFFSETS,
  bpmPulseRateOffset,
  bpmUserIdOffset,
  decodeBloodPressureMeasurement,
  encodeBloodPressureMeasurement,
} from "../characteristics/blood-pressure.ts";
import { type Grid, gridValue } from "../grid.ts";
import type { CharacteristicValue, DecodedReading, ReadingMapping } from "../mapping.ts";
import { isNaNValue } from "../medfloat.ts";
import { SIG, VENDOR } from "../uuids.ts";
import { batteryValue, companionValues, readingContextOf } from "./companions.ts";
import {
  buildParams,
  carried,
  convertedValue,
  localDateTime,
  mappingError,
  needNumber,
  noValue2,
  pickValues,
  refuseUnknownUser,
  slotRecords,
  unlessOutOfRange,
  utcOf,
  value1Of,
  value2Of,
} from "./shared.ts";

/**
 * `blood_pressure`: BPM cuffs and the cellular BPM (spec 2.8). One reading is one Blood Pressure
 * Measurement (2A35) in mmHg with its time stamp (device local time), the pulse rate field for
 * `pulse`, and Measurement Status bit 2 "irregular pulse detected" for `irregular_heartbeat`
 * (value 1, present only when detected); Battery Level (2A19) for `battery_percentage`; the vendor
 * Reading Context for measurement_index and the UTC offset. Decoding also takes kPa cuffs.
 */
const NAME = "blood_pressure mapping";
const METRICS = new Set(["blood_pressure", "pulse", "irregular_heartbeat", "battery_percentage"]);
const PARAMS = new Set(["measurement_index"]);
const UUIDS = [
  SIG.characteristics.bloodPressureMeasurement,
  SIG.characteristics.batteryLevel,
  VENDOR.readingContext,
] as const;
/** 1 kPa = 1000 Pa; 1 mmHg = 133.322387415 Pa. */
const MMHG_PER_KPA = 1000 / 133.322387415;

function encode(reading: PhysicalReading, profile: Profile): CharacteristicValue[] {
  const c = carried(profile, NAME, METRICS, PARAMS);
  const slots = slotRecords(reading, c, NAME);
  let systolic: number | undefined;
  let diastolic = 0;
  let pulseRate: number | undefined;
  let battery: number | undefined;
  let irregular = false;
  let detectsIrregular = false;
  for (const m of c.metrics) {
    const record = slots[m.index];
    if (m.name === "irregular_heartbeat") detectsIrregular = true;
    if (record === undefined) continue;
    switch (m.name) {
      case "blood_pressure":
        systolic = value1Of(record, m, NAME);
        diastolic = value2Of(record, m, NAME);
        break;
      case "pulse":
        noValue2(record, NAME);
        pulseRate = value1Of(record, m, NAME);
        break;
      case "irregular_heartbeat":
        noValue2(record, NAME);
        if (value1Of(record, m, NAME) !== 1) {
          throw mappingError(
            NAME,
            "irregular_heartbeat.value_1",
            "is 1 and sent only when detected (spec 2.8)",
          );
        }
        irregular = true;
        break;
      default:
        noValue2(record, NAME);
        battery = value1Of(record, m, NAME);
    }
  }
  if (systolic === undefined) {
    throw mappingError(NAME, "records", "a blood pressure reading needs a blood_pressure record");
  }
  const measurement: BloodPressureMeasurement = {
    unit: "mmHg",
    systolic,
    diastolic,
    // Mean arterial pressure, the usual one-third pulse pressure estimate, in whole mmHg.
    meanArterialPressure: Math.round((systolic + 2 * diastolic) / 3),
    timeStamp: localDateTime(reading, NAME),
    pulseRate,
    status: detectsIrregular
      ? {
          bodyMovementDetected: false,
          cuffTooLoose: false,
          irregularPulseDetected: irregular,
          improperMeasurementPosition: false,
          pulseRateRange: "within_range",
        }
      : undefined,
  };
  const values: CharacteristicValue[] = [
    { uuid: UUIDS[0], value: encodeBloodPressureMeasurement(measurement) },
  ];
  values.push(...companionValues(reading, slots, c, battery, NAME));
  return values;
}

function pressure(
  m: BloodPressureMeasurement,
  field: "systolic" | "diastolic",
  grid: Grid,
): number {
  const offset = BPM_OFFSETS[field];
  const v = needNumber(m[field], NAME, field, offset);
  return m.unit === "kPa"
    ? convertedValue(v * MMHG_PER_KPA, grid, NAME, field, offset)
    : gridValue(v, grid, NAME, field, offset);
}

function decode(
  values: readonly CharacteristicValue[],
  profile: Profile,
  undatedAt?: number,
): DecodedReading {
  const c = carried(profile, NAME, METRICS, PARAMS);
  const [bpm, battery, context] = pickValues(values, UUIDS, NAME);
  if (bpm === undefined) throw mappingError(NAME, "uuid", "no Blood Pressure Measurement (2A35)");
  const m = decodeBloodPressureMeasurement(bpm);
  refuseUnknownUser(m.userId, NAME, bpmUserIdOffset(m));
  const { timezone, measurementIndex } = readingContextOf(context);
  if (m.timeStamp === undefined && undatedAt === undefined) {
    throw mappingError(NAME, "time_stamp", "the measurement has no time stamp (flags bit 1)");
  }
  const source = { measurement_index: measurementIndex };
  const records: MetricRecord[] = [];
  const leftOut: RpmlabError[] = [];
  for (const metric of c.metrics) {
    let value_1: number;
    let value_2: number | null = null;
    switch (metric.name) {
      case "blood_pressure":
        if (metric.value2 === null)
          throw mappingError(NAME, "blood_pressure.value_2", "not defined");
        value_1 = pressure(m, "systolic", metric.value1);
        value_2 = pressure(m, "diastolic", metric.value2);
        break;
      case "pulse": {
        // 11073-20601 NaN: no valid value this time, as if the field were absent.
        if (m.pulseRate === undefined || isNaNValue(m.pulseRate)) continue;
        const offset = bpmPulseRateOffset(m);
        const v = needNumber(m.pulseRate, NAME, "pulse_rate", offset);
        // A cuff measuring past the profile's range (a pulse over its maximum): spec 2.8 has an
        // out-of-range alert for the glucometer only, so it cannot be reported at the edge with
        // one, and the blood pressure taken with it is valid. As with a NaN pulse (README "Real
        // hardware"), the pulse is left out and the rest kept; ingestion dead-letters the
        // message naming the field and byte.
        const pulse = unlessOutOfRange(leftOut, () =>
          gridValue(v, metric.value1, NAME, "pulse_rate", offset),
        );
        if (pulse === undefined) continue;
        value_1 = pulse;
        break;
      }
      case "irregular_heartbeat":
        if (m.status?.irregularPulseDetected !== true) continue;
        value_1 = 1;
        break;
      default:
        if (battery === undefined) continue;
        value_1 = batteryValue(battery, metric.value1, NAME);
    }
    const filter_params = buildParams(metric, source, NAME);
    records.push({ metric: metric.name, value_1, value_2, filter_params });
  }
  return {
    // BLS 1.0: the Time Stamp is optional (a cuff without a clock); undatedAt stands in.
    timestamp:
      m.timeStamp === undefined
        ? undatedAt!
        : utcOf(m.timeStamp, timezone, NAME, "time_stamp", BPM_OFFSETS.time_stamp),
    timezone_offset: timezone,
    records,
    ...(leftOut.length > 0 ? { leftOut } : {}),
  };
}

export const bloodPressureMapping: ReadingMapping = { name: "blood_pressure", encode, decode };
