import type { Profile } from "../../catalogue/schema.ts";
import { RpmlabError } from "../../core/errors.ts";
import type { MetricRecord, PhysicalReading } from "../../readings/types.ts";
import {
  decodePlxSpotCheckMeasurement,
  encodePlxSpotCheckMeasurement,
  PLX_SPOT_CHECK_OFFSETS,
  type PlxSpotCheckMeasurement,
  plxSpotCheckPaiOffset,
} from "../characteristics/plx-measurement.ts";
import { gridValue } from "../grid.ts";
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
  slotRecords,
  unlessOutOfRange,
  utcOf,
  value1Of,
} from "./shared.ts";

/**
 * `pulse_oximeter`: the gateway pulse oximeter (spec 2.8). One reading is one PLX Spot-check
 * Measurement (2A5E) with SpO2 (`spO2`), PR (`pulse`), its timestamp (device local time) and the
 * Pulse Amplitude Index (`perfusion_index`, %); Battery Level (2A19); the vendor Reading Context
 * for measurement_index and the UTC offset. SpO2 and PR are mandatory fields of 2A5E, so a
 * reading always has both. Decoding refuses a spot-check whose status says its values are no
 * patient's reading (checkTrustworthy).
 */
const NAME = "pulse_oximeter mapping";
const METRICS = new Set(["spO2", "pulse", "perfusion_index", "battery_percentage"]);
const PARAMS = new Set(["measurement_index"]);
const UUIDS = [
  SIG.characteristics.plxSpotCheckMeasurement,
  SIG.characteristics.batteryLevel,
  VENDOR.readingContext,
] as const;

function encode(reading: PhysicalReading, profile: Profile): CharacteristicValue[] {
  const c = carried(profile, NAME, METRICS, PARAMS);
  const slots = slotRecords(reading, c, NAME);
  let spo2: number | undefined;
  let pulseRate: number | undefined;
  let pai: number | undefined;
  let battery: number | undefined;
  for (const m of c.metrics) {
    const record = slots[m.index];
    if (record === undefined) continue;
    noValue2(record, NAME);
    const v = value1Of(record, m, NAME);
    if (m.name === "spO2") spo2 = v;
    else if (m.name === "pulse") pulseRate = v;
    else if (m.name === "perfusion_index") pai = v;
    else battery = v;
  }
  if (spo2 === undefined || pulseRate === undefined) {
    throw mappingError(NAME, "records", "a pulse oximeter reading needs spO2 and pulse records");
  }
  const timestamp = localDateTime(reading, NAME);
  const values: CharacteristicValue[] = [
    {
      uuid: UUIDS[0],
      value: encodePlxSpotCheckMeasurement({
        spo2,
        pulseRate,
        timestamp,
        pulseAmplitudeIndex: pai,
        deviceClockNotSet: false,
      }),
    },
  ];
  values.push(...companionValues(reading, slots, c, battery, NAME));
  return values;
}

/**
 * PLXS 1.0.1 Measurement Status bits whose values are no patient's reading: demonstration or
 * test data, a measurement the device could not make, or one it found invalid.
 */
const NOT_A_READING = [
  ["dataForDemonstration", "data for demonstration (bit 10)"],
  ["dataForTesting", "data for testing (bit 11)"],
  ["measurementUnavailable", "measurement unavailable (bit 13)"],
  ["invalidMeasurementDetected", "invalid measurement detected (bit 15)"],
] as const;
/** Measurement Status follows the flags, SpO2, PR and the optional 7-byte Timestamp. */
function measurementStatusOffset(m: PlxSpotCheckMeasurement): number {
  return 5 + (m.timestamp === undefined ? 0 : 7);
}

/**
 * Refuses a spot-check whose Measurement Status disowns its values (NOT_A_READING). One stamped
 * by a clock the device says is not set (flags bit 4) decodes with that stamp: ingestion stores
 * it at the gateway's receive time, as estimated (clock-not-set.ts, ingest/rows.ts).
 */
function checkTrustworthy(m: PlxSpotCheckMeasurement): void {
  const status = m.measurementStatus;
  if (status === undefined) return;
  for (const [flag, what] of NOT_A_READING) {
    if (!status[flag]) continue;
    const offset = measurementStatusOffset(m);
    throw new RpmlabError(
      "E_CODEC_RESERVED",
      `${NAME}: measurement_status at byte ${offset}: ${what}; the values are not a patient's reading`,
      { field: "measurement_status", offset },
    );
  }
}

function decode(
  values: readonly CharacteristicValue[],
  profile: Profile,
  undatedAt?: number,
): DecodedReading {
  const c = carried(profile, NAME, METRICS, PARAMS);
  const [spot, battery, context] = pickValues(values, UUIDS, NAME);
  if (spot === undefined) throw mappingError(NAME, "uuid", "no PLX Spot-check Measurement (2A5E)");
  const m = decodePlxSpotCheckMeasurement(spot);
  checkTrustworthy(m);
  const { timezone, measurementIndex } = readingContextOf(context);
  if (m.timestamp === undefined && undatedAt === undefined) {
    throw mappingError(NAME, "timestamp", "the measurement has no timestamp (flags bit 0)");
  }
  const source = { measurement_index: measurementIndex };
  const records: MetricRecord[] = [];
  // A pulse or perfusion index past the profile's range is left out, the SpO2 and the rest kept
  // (as the blood_pressure mapping does a cuff's pulse; spec 2.8 has no alert for them).
  const leftOut: RpmlabError[] = [];
  for (const metric of c.metrics) {
    let value_1: number | undefined;
    switch (metric.name) {
      case "spO2": {
        const at = PLX_SPOT_CHECK_OFFSETS.spo2;
        value_1 = gridValue(needNumber(m.spo2, NAME, "spo2", at), metric.value1, NAME, "spo2", at);
        break;
      }
      case "pulse": {
        // 11073-20601 NaN: no valid value this time, as if the field were absent.
        if (isNaNValue(m.pulseRate)) continue;
        const at = PLX_SPOT_CHECK_OFFSETS.pulse_rate;
        const v = needNumber(m.pulseRate, NAME, "pulse_rate", at);
        value_1 = unlessOutOfRange(leftOut, () =>
          gridValue(v, metric.value1, NAME, "pulse_rate", at),
        );
        break;
      }
      case "perfusion_index": {
        if (m.pulseAmplitudeIndex === undefined || isNaNValue(m.pulseAmplitudeIndex)) continue;
        const at = plxSpotCheckPaiOffset(m);
        const v = needNumber(m.pulseAmplitudeIndex, NAME, "pulse_amplitude_index", at);
        // At a finer resolution than the profile's 0.1 % step (an SFLOAT of 1.26): rounded to
        // it, as a weight is to the scale's step (README "Real hardware").
        value_1 = unlessOutOfRange(leftOut, () =>
          convertedValue(v, metric.value1, NAME, "pulse_amplitude_index", at),
        );
        break;
      }
      default:
        if (battery === undefined) continue;
        value_1 = batteryValue(battery, metric.value1, NAME);
    }
    if (value_1 === undefined) continue;
    records.push({
      metric: metric.name,
      value_1,
      value_2: null,
      filter_params: buildParams(metric, source, NAME),
    });
  }
  return {
    // PLXS 1.0.1: the Timestamp is optional (an oximeter without a clock); undatedAt stands in.
    timestamp:
      m.timestamp === undefined
        ? undatedAt!
        : utcOf(m.timestamp, timezone, NAME, "timestamp", PLX_SPOT_CHECK_OFFSETS.timestamp),
    timezone_offset: timezone,
    records,
    ...(leftOut.length > 0 ? { leftOut } : {}),
  };
}

export const pulseOximeterMapping: ReadingMapping = { name: "pulse_oximeter", encode, decode };
