import type { MetricSpec, Profile } from "../../catalogue/schema.ts";
import { RpmlabError } from "../../core/errors.ts";
import type { FilterParamValue, MetricRecord, PhysicalReading } from "../../readings/types.ts";
import {
  decodeGlucoseMeasurementContext,
  encodeGlucoseMeasurementContext,
  type Meal,
} from "../characteristics/glucose-context.ts";
import {
  decodeGlucoseMeasurement,
  encodeGlucoseMeasurement,
  type GlucoseMeasurement,
  type GlucoseSampleLocation,
  glucoseConcentrationOffset,
  SENSOR_STATUS,
} from "../characteristics/glucose-measurement.ts";
import { paramSpec } from "../filter-values.ts";
import { gridValue } from "../grid.ts";
import type { CharacteristicValue, ReadingMapping } from "../mapping.ts";
import type { Medfloat } from "../medfloat.ts";
import { SIG, VENDOR } from "../uuids.ts";
import { batteryValue, companionValues, readingContextOf } from "./companions.ts";
import type { CompiledMetric } from "./compiled.ts";
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
  utcOf,
  value1Of,
} from "./shared.ts";

/**
 * `glucose`: glucometers (spec 2.8: glucose in mg/dL). One reading is a Glucose Measurement (2A18)
 * with the concentration in kg/L (mg/dL = kg/L × 100 000, written at exponent -5), the sample
 * location as measurement_location, Sensor Status Annunciation bit 5 "result higher than the
 * device can process" as the above-range alert (present only on such a reading), and the
 * sequence number; a Glucose Measurement Context (2A34, same sequence number) whose Meal is
 * meal_context; Battery Level (2A19); the vendor Reading Context for the UTC offset.
 */
const NAME = "glucose mapping";
const METRICS = new Set(["glucose", "battery_percentage"]);
const PARAMS = new Set(["meal_context", "measurement_location", "alert", "measurement_index"]);
const UUIDS = [
  SIG.characteristics.glucoseMeasurement,
  SIG.characteristics.glucoseMeasurementContext,
  SIG.characteristics.batteryLevel,
  VENDOR.readingContext,
] as const;
/** Base Time follows the flags and the sequence number (GLS 2A18). */
const BASE_TIME_OFFSET = 3;
const MG_PER_DL_PER_KG_PER_L = 100_000;
/** Glucose, 180.156 g/mol: 1 mol/L = 18 015.6 mg/dL. */
const MG_PER_DL_PER_MOL_PER_L = 18_015.6;

/** Spec 2.8 measurement_location values ↔ GSS Sample Location. */
const LOCATIONS: Readonly<Record<string, GlucoseSampleLocation>> = {
  finger: "finger",
  "alternative site": "alternate_site_test",
  earlobe: "earlobe",
  "control solution": "control_solution",
  "N/A": "not_available",
};
/** Spec 2.8 meal_context values ↔ GSS Meal (casual and bedtime have no spec value). */
const MEALS: Readonly<Record<string, Meal>> = {
  "pre-prandial": "preprandial",
  "post-prandial": "postprandial",
  fasting: "fasting",
};

function reverse<T extends string>(table: Readonly<Record<string, T>>): ReadonlyMap<T, string> {
  return new Map(Object.entries(table).map(([spec, sig]) => [sig, spec]));
}
const LOCATION_NAMES = reverse(LOCATIONS);
const CONTROL_SOLUTION = "control solution";
const MEAL_NAMES = reverse(MEALS);
/** Sensor Status Annunciation of an above-range reading: bit 5 alone. */
const ABOVE_RANGE = Object.freeze({
  ...SENSOR_STATUS.none(),
  resultHigherThanDeviceCanProcess: true,
});

/** The filter param and value flagging an above-range reading (profile `above_range`). */
function alertOf(metric: MetricSpec): { key: string; value: string; reportedAs: number } {
  const above = metric.above_range;
  return above === undefined
    ? { key: "alert", value: "sensor_result_above_range", reportedAs: metric.value_1.max }
    : { key: above.filter_param, value: above.value, reportedAs: above.reported_as };
}

/** Fails when the profile's enum values are not the spec 2.8 spellings this mapping knows. */
const checkedEnums = new WeakSet<Profile>();
function checkEnums(profile: Profile): void {
  if (checkedEnums.has(profile)) return;
  for (const [key, table] of [
    ["meal_context", MEALS],
    ["measurement_location", LOCATIONS],
  ] as const) {
    const spec = paramSpec(profile, key);
    if (spec === undefined) continue;
    const values = spec.kind === "enum" ? spec.values : [];
    const unknown = values.filter((v) => !Object.hasOwn(table, v));
    if (spec.kind !== "enum" || unknown.length > 0) {
      throw mappingError(
        NAME,
        `filter_params.${key}`,
        `values ${unknown.join(", ")} have no GATT code; known: ${Object.keys(table).join(", ")}`,
      );
    }
  }
  checkedEnums.add(profile);
}

function encode(reading: PhysicalReading, profile: Profile, sequence = 0): CharacteristicValue[] {
  const c = carried(profile, NAME, METRICS, PARAMS);
  checkEnums(profile);
  const slots = slotRecords(reading, c, NAME);
  let glucose: MetricRecord | undefined;
  let glucoseMetric: CompiledMetric | undefined;
  let battery: number | undefined;
  for (const m of c.metrics) {
    const record = slots[m.index];
    if (record === undefined) continue;
    noValue2(record, NAME);
    if (m.name === "glucose") {
      glucose = record;
      glucoseMetric = m;
    } else battery = value1Of(record, m, NAME);
  }
  if (glucose === undefined || glucoseMetric === undefined) {
    throw mappingError(NAME, "records", "a glucometer reading needs a glucose record");
  }
  const mgPerDl = value1Of(glucose, glucoseMetric, NAME);
  const params = glucose.filter_params ?? {};
  const location = LOCATIONS[params.measurement_location as string] ?? "not_available";
  const meal = MEALS[params.meal_context as string];
  const alert = alertOf(glucoseMetric.spec);
  const baseTime = localDateTime(reading, NAME);
  const values: CharacteristicValue[] = [
    {
      uuid: UUIDS[0],
      value: encodeGlucoseMeasurement({
        sequenceNumber: sequence,
        baseTime,
        concentration: {
          unit: "kg/L",
          value: mgPerDl / MG_PER_DL_PER_KG_PER_L,
          type: location === "control_solution" ? "control_solution" : "capillary_whole_blood",
          location,
        },
        sensorStatus: params[alert.key] === alert.value ? ABOVE_RANGE : undefined,
        contextFollows: meal !== undefined,
      }),
    },
  ];
  if (meal !== undefined) {
    const context = encodeGlucoseMeasurementContext({ sequenceNumber: sequence, meal });
    values.push({ uuid: UUIDS[1], value: context });
  }
  values.push(...companionValues(reading, slots, c, battery, NAME));
  return values;
}

function decode(values: readonly CharacteristicValue[], profile: Profile): PhysicalReading {
  const c = carried(profile, NAME, METRICS, PARAMS);
  checkEnums(profile);
  const [measurement, context, battery, readingContext] = pickValues(values, UUIDS, NAME);
  if (measurement === undefined) throw mappingError(NAME, "uuid", "no Glucose Measurement (2A18)");
  const m = decodeGlucoseMeasurement(measurement);
  const gc = context === undefined ? undefined : decodeGlucoseMeasurementContext(context);
  if (m.contextFollows !== (gc !== undefined)) {
    throw mappingError(
      NAME,
      "flags",
      m.contextFollows
        ? "context announced (bit 4) but no 2A34 value"
        : "a 2A34 value the measurement does not announce (bit 4)",
    );
  }
  if (gc !== undefined && gc.sequenceNumber !== m.sequenceNumber) {
    throw mappingError(
      NAME,
      "sequence_number",
      `context ${gc.sequenceNumber} does not match measurement ${m.sequenceNumber}`,
    );
  }
  if (m.concentration === undefined) {
    throw mappingError(
      NAME,
      "glucose_concentration",
      "the measurement has no concentration (flags bit 1)",
    );
  }
  checkSensorStatus(m);
  const { timezone, measurementIndex } = readingContextOf(readingContext);
  const above = m.sensorStatus?.resultHigherThanDeviceCanProcess === true;
  const below = m.sensorStatus?.resultLowerThanDeviceCanProcess === true;
  const records: MetricRecord[] = [];
  for (const metric of c.metrics) {
    const source: Record<string, FilterParamValue | undefined> = {
      measurement_index: measurementIndex,
    };
    let value_1: number;
    if (metric.name === "glucose") {
      const alert = alertOf(metric.spec);
      const offset = glucoseConcentrationOffset(m);
      value_1 = concentration(
        m.concentration.value,
        m.concentration.unit,
        { above, below },
        alert.reportedAs,
        metric,
        offset,
      );
      // A control solution test is one by its Type (10), whatever Sample Location the meter
      // gives with it (often 15, not available): never a patient's finger or earlobe sample.
      const location =
        m.concentration.type === "control_solution"
          ? CONTROL_SOLUTION
          : LOCATION_NAMES.get(m.concentration.location);
      source.measurement_location =
        location === "N/A" && !enumHas(profile, "measurement_location", "N/A")
          ? undefined
          : location;
      source.meal_context = gc?.meal === undefined ? undefined : MEAL_NAMES.get(gc.meal);
      if (above) source[alert.key] = alert.value;
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
  const timestamp = utcOf(
    m.baseTime,
    timezone,
    NAME,
    "base_time",
    BASE_TIME_OFFSET,
    m.timeOffset ?? 0,
  );
  return { timestamp, timezone_offset: timezone, records };
}

/**
 * GLS 1.0 Sensor Status Annunciation bits whose concentration is no valid result (the strip, the
 * sample or the meter failed). Battery low and the above/below range bits leave the result as it
 * is; a time fault leaves it too, and ingestion stores it at the receive time, as estimated
 * (clock-not-set.ts).
 */
const VOIDING_STATUS = [
  ["sensorMalfunction", "sensor malfunction (bit 1)"],
  ["sampleSizeInsufficient", "sample size insufficient (bit 2)"],
  ["stripInsertionError", "strip insertion error (bit 3)"],
  ["stripTypeIncorrect", "strip type incorrect (bit 4)"],
  ["temperatureTooHigh", "temperature too high (bit 7)"],
  ["temperatureTooLow", "temperature too low (bit 8)"],
  ["readInterrupted", "read interrupted (bit 9)"],
  ["generalDeviceFault", "general device fault (bit 10)"],
] as const;

/** Refuses a measurement whose Sensor Status Annunciation voids it (VOIDING_STATUS). */
function checkSensorStatus(m: GlucoseMeasurement): void {
  const status = m.sensorStatus;
  if (status === undefined) return;
  for (const [flag, what] of VOIDING_STATUS) {
    if (!status[flag]) continue;
    // The annunciation is the last field: after the concentration and its Type-Sample Location.
    const offset = glucoseConcentrationOffset(m) + (m.concentration === undefined ? 0 : 3);
    throw new RpmlabError(
      "E_CODEC_RESERVED",
      `${NAME}: sensor_status_annunciation at byte ${offset}: ${what}; the meter gives no valid reading`,
      { field: "sensor_status_annunciation", offset },
    );
  }
}

function enumHas(profile: Profile, key: string, value: string): boolean {
  const spec = paramSpec(profile, key);
  return spec?.kind === "enum" && spec.values.includes(value);
}

/**
 * mg/dL of a concentration. A meter that cannot measure a high reading may send +INF with the
 * "higher than the device can process" bit (GLS Sensor Status Annunciation bit 5), or a value
 * past the top; that reading is reported as the top of the range. A low one, -INF or a value
 * under the bottom with bit 6, as the bottom (README: below range reports the bottom of the
 * range, without an alert).
 */
function concentration(
  v: Medfloat,
  unit: "kg/L" | "mol/L",
  out: { readonly above: boolean; readonly below: boolean },
  reportedAs: number,
  metric: CompiledMetric,
  offset: number,
): number {
  if (typeof v !== "number" && v.special === "+inf" && out.above) return reportedAs;
  if (typeof v !== "number" && v.special === "-inf" && out.below) return metric.value1.min;
  const n = needNumber(v, NAME, "glucose_concentration", offset);
  // A finite HI or LO past the profile's range: a meter measuring further than it (to 700
  // mg/dL, say) sends its own limit with the same bit. Reported as the README says above, not
  // refused: the reading a patient took is kept, and spec 2.8's alert says it was out of range.
  const mgPerDl = n * (unit === "kg/L" ? MG_PER_DL_PER_KG_PER_L : MG_PER_DL_PER_MOL_PER_L);
  if (out.above && mgPerDl > reportedAs) return reportedAs;
  if (out.below && mgPerDl < metric.value1.min) return metric.value1.min;
  return unit === "kg/L"
    ? gridValue(n * MG_PER_DL_PER_KG_PER_L, metric.value1, NAME, "glucose_concentration", offset)
    : convertedValue(
        n * MG_PER_DL_PER_MOL_PER_L,
        metric.value1,
        NAME,
        "glucose_concentration",
        offset,
      );
}

export const glucoseMapping: ReadingMapping = { name: "glucose", encode, decode };
