import type { Profile } from "../../catalogue/schema.ts";
import { RpmlabError } from "../../core/errors.ts";
import type { MetricRecord, PhysicalReading } from "../../readings/types.ts";
import {
  decodeWeightMeasurement,
  encodeWeightMeasurement,
  weightUserIdOffset,
} from "../characteristics/weight.ts";
import type { CharacteristicValue, ReadingMapping } from "../mapping.ts";
import { SIG, VENDOR } from "../uuids.ts";
import { batteryValue, companionValues, readingContextOf } from "./companions.ts";
import {
  buildParams,
  carried,
  convertedValue,
  localDateTime,
  mappingError,
  noValue2,
  pickValues,
  refuseUnknownUser,
  slotRecords,
  utcOf,
  value1Of,
} from "./shared.ts";

/**
 * `weight_scale`: scales (spec 2.8: weight in pounds). One reading is one Weight Measurement
 * (2A9D) in imperial units (flags bit 0: 0.01 lb resolution, at most 655.34 lb) with its time
 * stamp (device local time); Battery Level (2A19); the vendor Reading Context for the UTC offset
 * (and measurement_index, should a scale profile carry it). Decoding also takes SI (kg) scales.
 */
const NAME = "weight_scale mapping";
const METRICS = new Set(["weight", "battery_percentage"]);
const PARAMS = new Set(["measurement_index"]);
const UUIDS = [
  SIG.characteristics.weightMeasurement,
  SIG.characteristics.batteryLevel,
  VENDOR.readingContext,
] as const;
/** The international pound: 0.45359237 kg exactly. */
const KG_PER_LB = 0.45359237;
/** Weight follows the 1-byte flags in 2A9D. */
const WEIGHT_OFFSET = 1;
/** The Time Stamp follows the weight. */
const TIME_STAMP_OFFSET = 3;

function encode(reading: PhysicalReading, profile: Profile): CharacteristicValue[] {
  const c = carried(profile, NAME, METRICS, PARAMS);
  const slots = slotRecords(reading, c, NAME);
  let weight: number | undefined;
  let battery: number | undefined;
  for (const m of c.metrics) {
    const record = slots[m.index];
    if (record === undefined) continue;
    noValue2(record, NAME);
    if (m.name === "weight") weight = value1Of(record, m, NAME);
    else battery = value1Of(record, m, NAME);
  }
  if (weight === undefined)
    throw mappingError(NAME, "records", "a scale reading needs a weight record");
  const timeStamp = localDateTime(reading, NAME);
  const values: CharacteristicValue[] = [
    { uuid: UUIDS[0], value: encodeWeightMeasurement({ unit: "imperial", weight, timeStamp }) },
  ];
  values.push(...companionValues(reading, slots, c, battery, NAME));
  return values;
}

function decode(
  values: readonly CharacteristicValue[],
  profile: Profile,
  undatedAt?: number,
): PhysicalReading {
  const c = carried(profile, NAME, METRICS, PARAMS);
  const [measurement, battery, context] = pickValues(values, UUIDS, NAME);
  if (measurement === undefined) throw mappingError(NAME, "uuid", "no Weight Measurement (2A9D)");
  const m = decodeWeightMeasurement(measurement);
  refuseUnknownUser(m.userId, NAME, weightUserIdOffset(m));
  const { timezone, measurementIndex } = readingContextOf(context);
  if (m.timeStamp === undefined && undatedAt === undefined) {
    throw mappingError(NAME, "time_stamp", "the measurement has no time stamp (flags bit 1)");
  }
  const source = { measurement_index: measurementIndex };
  const records: MetricRecord[] = [];
  for (const metric of c.metrics) {
    let value_1: number;
    if (metric.name === "weight") {
      if (m.weight === null) {
        throw new RpmlabError(
          "E_CODEC_RESERVED",
          `${NAME}: weight at byte ${WEIGHT_OFFSET}: 0xFFFF, the scale reports Measurement Unsuccessful`,
          { field: "weight", offset: WEIGHT_OFFSET },
        );
      }
      // To the profile's step, in either unit: a real scale's resolution may be finer (WSS
      // 2A9D: 0.01 lb; Weight Scale Feature: 0.1 lb) than the 0.2 lb the lab reports.
      const pounds = m.unit === "SI" ? m.weight / KG_PER_LB : m.weight;
      value_1 = convertedValue(pounds, metric.value1, NAME, "weight", WEIGHT_OFFSET);
    } else if (battery !== undefined) {
      value_1 = batteryValue(battery, metric.value1, NAME);
    } else continue;
    records.push({
      metric: metric.name,
      value_1,
      value_2: null,
      filter_params: buildParams(metric, source, NAME),
    });
  }
  return {
    // WSS 1.0: the Time Stamp is optional (a scale without a clock); undatedAt stands in.
    timestamp:
      m.timeStamp === undefined
        ? undatedAt!
        : utcOf(m.timeStamp, timezone, NAME, "time_stamp", TIME_STAMP_OFFSET),
    timezone_offset: timezone,
    records,
  };
}

export const weightScaleMapping: ReadingMapping = { name: "weight_scale", encode, decode };
