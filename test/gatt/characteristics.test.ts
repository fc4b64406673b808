/**
 * Each characteristic codec's own round trip (typed object → bytes → the same object) over
 * arbitrary valid objects, and the byte count its flags announce.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeBatteryLevel,
  encodeBatteryLevel,
} from "../../src/gatt/characteristics/battery-level.ts";
import {
  type BloodPressureMeasurement,
  decodeBloodPressureFeature,
  decodeBloodPressureMeasurement,
  encodeBloodPressureFeature,
  encodeBloodPressureMeasurement,
} from "../../src/gatt/characteristics/blood-pressure.ts";
import {
  type CurrentTime,
  currentTimeAt,
  decodeCurrentTime,
  encodeCurrentTime,
} from "../../src/gatt/characteristics/current-time.ts";
import {
  DEVICE_INFORMATION_STRINGS,
  type DeviceInformationUuid,
  decodeDeviceInformationString,
  encodeDeviceInformationString,
} from "../../src/gatt/characteristics/device-information.ts";
import {
  CARBOHYDRATES,
  decodeGlucoseMeasurementContext,
  encodeGlucoseMeasurementContext,
  type GlucoseMeasurementContext,
  HEALTH,
  MEALS,
  MEDICATIONS,
  TESTERS,
} from "../../src/gatt/characteristics/glucose-context.ts";
import {
  decodeGlucoseFeature,
  encodeGlucoseFeature,
} from "../../src/gatt/characteristics/glucose-feature.ts";
import {
  decodeGlucoseMeasurement,
  encodeGlucoseMeasurement,
  type GlucoseMeasurement,
  SAMPLE_LOCATIONS,
  SAMPLE_TYPES,
  SENSOR_STATUS,
} from "../../src/gatt/characteristics/glucose-measurement.ts";
import {
  decodePlxFeatures,
  encodePlxFeatures,
  type PlxFeatures,
} from "../../src/gatt/characteristics/plx-features.ts";
import {
  decodePlxContinuousMeasurement,
  decodePlxSpotCheckMeasurement,
  encodePlxContinuousMeasurement,
  encodePlxSpotCheckMeasurement,
  type PlxContinuousMeasurement,
  type PlxSpotCheckMeasurement,
} from "../../src/gatt/characteristics/plx-measurement.ts";
import {
  PLX_DEVICE_AND_SENSOR_STATUS,
  PLX_MEASUREMENT_STATUS,
} from "../../src/gatt/characteristics/plx-status.ts";
import {
  decodeRacp,
  encodeRacp,
  RACP_OP_CODES,
  RACP_RESPONSE_CODES,
  type RacpMessage,
} from "../../src/gatt/characteristics/racp.ts";
import {
  decodeWeightMeasurement,
  decodeWeightScaleFeature,
  encodeWeightMeasurement,
  encodeWeightScaleFeature,
  HEIGHT_RESOLUTIONS,
  WEIGHT_RESOLUTIONS,
  type WeightMeasurement,
} from "../../src/gatt/characteristics/weight.ts";
import {
  decodeReadingContext,
  encodeReadingContext,
} from "../../src/gatt/vendor/reading-context.ts";
import { dateTimeArb, flagsArb, maybe, sfloatArb } from "./value-arbitraries.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const names = <T extends object>(o: T) => Object.keys(o) as Array<keyof T & string>;
const RUNS = { numRuns: 500 };

/** Checks decode(encode(x)) equals x and the encoding decodes to exactly `x`. */
function roundTrip<T>(
  arb: fc.Arbitrary<T>,
  encode: (x: T) => Uint8Array,
  decode: (b: Uint8Array) => T,
) {
  fc.assert(
    fc.property(arb, (x) => {
      const bytes = encode(x);
      expect(decode(bytes)).toEqual(x);
      // A second encoding of the decoded object gives the same bytes.
      expect(hex(encode(decode(bytes)))).toBe(hex(bytes));
    }),
    RUNS,
  );
}

const userIdArb = fc.integer({ min: 0, max: 255 });

describe("Blood Pressure Measurement 0x2A35 / Feature 0x2A49", () => {
  const statusArb = fc.record({
    bodyMovementDetected: fc.boolean(),
    cuffTooLoose: fc.boolean(),
    irregularPulseDetected: fc.boolean(),
    improperMeasurementPosition: fc.boolean(),
    pulseRateRange: fc.constantFrom(
      "within_range",
      "exceeds_upper_limit",
      "below_lower_limit" as const,
    ),
  });
  const arb: fc.Arbitrary<BloodPressureMeasurement> = fc.record({
    unit: fc.constantFrom("mmHg", "kPa" as const),
    systolic: sfloatArb,
    diastolic: sfloatArb,
    meanArterialPressure: sfloatArb,
    timeStamp: maybe(dateTimeArb),
    pulseRate: maybe(sfloatArb),
    userId: maybe(userIdArb),
    status: maybe(statusArb.map((s) => ({ ...s }))),
  });

  it("round-trips", () =>
    roundTrip(arb, encodeBloodPressureMeasurement, decodeBloodPressureMeasurement));

  it("is as long as its flags say", () => {
    fc.assert(
      fc.property(arb, (m) => {
        const expected =
          7 +
          (m.timeStamp ? 7 : 0) +
          (m.pulseRate !== undefined ? 2 : 0) +
          (m.userId !== undefined ? 1 : 0) +
          (m.status ? 2 : 0);
        expect(encodeBloodPressureMeasurement(m).length).toBe(expected);
      }),
      RUNS,
    );
  });

  it("feature round-trips", () => {
    const f = decodeBloodPressureFeature(Uint8Array.of(0xff, 0x01));
    roundTrip(flagsArb(names(f)), encodeBloodPressureFeature, decodeBloodPressureFeature);
  });
});

describe("Weight Measurement 0x2A9D / Weight Scale Feature 0x2A9E", () => {
  const arb: fc.Arbitrary<WeightMeasurement> = fc
    .record({
      imperial: fc.boolean(),
      raw: fc.option(fc.integer({ min: 0, max: 0xfffe }), { nil: null }),
      timeStamp: maybe(dateTimeArb),
      userId: maybe(userIdArb),
      bmiHeight: maybe(
        fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffff })),
      ),
    })
    .map(({ imperial, raw, timeStamp, userId, bmiHeight }) => ({
      unit: imperial ? "imperial" : "SI",
      weight: raw === null ? null : raw / (imperial ? 100 : 200),
      timeStamp,
      userId,
      bmi: bmiHeight === undefined ? undefined : bmiHeight[0] / 10,
      height: bmiHeight === undefined ? undefined : bmiHeight[1] / (imperial ? 10 : 1000),
    }));

  it("round-trips", () => roundTrip(arb, encodeWeightMeasurement, decodeWeightMeasurement));

  it("feature round-trips", () =>
    roundTrip(
      fc.record({
        timeStamp: fc.boolean(),
        multipleUsers: fc.boolean(),
        bmi: fc.boolean(),
        weightResolution: fc.constantFrom(...WEIGHT_RESOLUTIONS),
        heightResolution: fc.constantFrom(...HEIGHT_RESOLUTIONS),
      }),
      encodeWeightScaleFeature,
      decodeWeightScaleFeature,
    ));
});

describe("Glucose 0x2A18 / 0x2A34 / 0x2A51", () => {
  const measurementArb: fc.Arbitrary<GlucoseMeasurement> = fc.record({
    sequenceNumber: fc.integer({ min: 0, max: 0xffff }),
    baseTime: dateTimeArb,
    timeOffset: maybe(fc.integer({ min: -32768, max: 32767 })),
    concentration: maybe(
      fc.record({
        unit: fc.constantFrom("kg/L", "mol/L" as const),
        value: sfloatArb,
        type: fc.constantFrom(...names(SAMPLE_TYPES.codes)),
        location: fc.constantFrom(...names(SAMPLE_LOCATIONS.codes)),
      }),
    ),
    sensorStatus: maybe(flagsArb(SENSOR_STATUS.names)),
    contextFollows: fc.boolean(),
  });
  const contextArb: fc.Arbitrary<GlucoseMeasurementContext> = fc.record({
    sequenceNumber: fc.integer({ min: 0, max: 0xffff }),
    carbohydrate: maybe(
      fc.record({ id: fc.constantFrom(...names(CARBOHYDRATES.codes)), kg: sfloatArb }),
    ),
    meal: maybe(fc.constantFrom(...names(MEALS.codes))),
    testerHealth: maybe(
      fc.record({
        tester: fc.constantFrom(...names(TESTERS.codes)),
        health: fc.constantFrom(...names(HEALTH.codes)),
      }),
    ),
    exercise: maybe(
      fc.record({
        durationSeconds: fc.integer({ min: 0, max: 0xffff }),
        intensityPercent: fc.integer({ min: 0, max: 100 }),
      }),
    ),
    medication: maybe(
      fc.record({
        id: fc.constantFrom(...names(MEDICATIONS.codes)),
        value: sfloatArb,
        unit: fc.constantFrom("kg", "L" as const),
      }),
    ),
    hba1cPercent: maybe(sfloatArb),
  });

  it("measurement round-trips", () =>
    roundTrip(measurementArb, encodeGlucoseMeasurement, decodeGlucoseMeasurement));
  it("context round-trips", () =>
    roundTrip(contextArb, encodeGlucoseMeasurementContext, decodeGlucoseMeasurementContext));
  it("feature round-trips", () => {
    const f = decodeGlucoseFeature(Uint8Array.of(0xff, 0x07));
    roundTrip(flagsArb(names(f)), encodeGlucoseFeature, decodeGlucoseFeature);
  });
});

describe("Record Access Control Point 0x2A52", () => {
  const seq = fc.integer({ min: 0, max: 0xffff });
  const recordOp = fc.constantFrom(
    "report_stored_records",
    "delete_stored_records",
    "report_number_of_stored_records" as const,
  );
  const arb: fc.Arbitrary<RacpMessage> = fc.oneof(
    fc.record({
      opCode: recordOp,
      operator: fc.constantFrom("all_records", "first_record", "last_record" as const),
    }),
    fc.record({
      opCode: recordOp,
      operator: fc.constantFrom("less_than_or_equal_to", "greater_than_or_equal_to" as const),
      filter: fc.oneof(
        fc.record({ type: fc.constant("sequence_number" as const), value: seq }),
        fc.record({ type: fc.constant("user_facing_time" as const), value: dateTimeArb }),
      ),
    }),
    fc.record({
      opCode: recordOp,
      operator: fc.constant("within_range_of" as const),
      range: fc.oneof(
        fc.record({ type: fc.constant("sequence_number" as const), min: seq, max: seq }),
        fc.record({
          type: fc.constant("user_facing_time" as const),
          min: dateTimeArb,
          max: dateTimeArb,
        }),
      ),
    }),
    fc.record({ opCode: fc.constant("abort_operation" as const) }),
    fc.record({ opCode: fc.constant("number_of_stored_records_response" as const), count: seq }),
    fc.record({
      opCode: fc.constant("response_code" as const),
      requestOpCode: fc.oneof(
        fc.constantFrom(...names(RACP_OP_CODES)),
        fc.integer({ min: 7, max: 255 }),
      ),
      responseCode: fc.constantFrom(...names(RACP_RESPONSE_CODES)),
    }),
  );
  it("round-trips", () => roundTrip(arb, encodeRacp, decodeRacp));

  it("tells the server which response code refuses a bad request", () => {
    const responseTo = (h: string) => {
      try {
        decodeRacp(Uint8Array.from(Buffer.from(h, "hex")));
      } catch (error) {
        return (error as { details: { racpResponse?: string } }).details.racpResponse;
      }
      return "decoded";
    };
    expect(responseTo("0701")).toBe("op_code_not_supported");
    expect(responseTo("0107")).toBe("operator_not_supported");
    expect(responseTo("0100")).toBe("invalid_operator");
    expect(responseTo("01")).toBe("invalid_operator"); // no operator at all
    expect(responseTo("0103030a00")).toBe("operand_not_supported");
    expect(responseTo("0103010a")).toBe("invalid_operand");
    expect(responseTo("010101")).toBe("invalid_operand");
    expect(responseTo("01040109000500")).toBe("decoded"); // min > max: the server's call
  });
});

describe("PLX 0x2A5E / 0x2A5F / 0x2A60", () => {
  const statusArb = flagsArb(PLX_MEASUREMENT_STATUS.names);
  const deviceArb = flagsArb(PLX_DEVICE_AND_SENSOR_STATUS.names);
  const pair = fc.record({ spo2: sfloatArb, pulseRate: sfloatArb });
  const spotArb: fc.Arbitrary<PlxSpotCheckMeasurement> = fc.record({
    spo2: sfloatArb,
    pulseRate: sfloatArb,
    timestamp: maybe(dateTimeArb),
    measurementStatus: maybe(statusArb),
    deviceAndSensorStatus: maybe(deviceArb),
    pulseAmplitudeIndex: maybe(sfloatArb),
    deviceClockNotSet: fc.boolean(),
  });
  const continuousArb: fc.Arbitrary<PlxContinuousMeasurement> = fc.record({
    normal: pair,
    fast: maybe(pair),
    slow: maybe(pair),
    measurementStatus: maybe(statusArb),
    deviceAndSensorStatus: maybe(deviceArb),
    pulseAmplitudeIndex: maybe(sfloatArb),
  });
  const featuresArb: fc.Arbitrary<PlxFeatures> = fc.record({
    supported: flagsArb(names(decodePlxFeatures(Uint8Array.of(0xfc, 0x00)).supported)),
    measurementStatusSupport: maybe(statusArb),
    deviceAndSensorStatusSupport: maybe(deviceArb),
  });
  it("spot-check round-trips", () =>
    roundTrip(spotArb, encodePlxSpotCheckMeasurement, decodePlxSpotCheckMeasurement));
  it("continuous round-trips", () =>
    roundTrip(continuousArb, encodePlxContinuousMeasurement, decodePlxContinuousMeasurement));
  it("features round-trip", () => roundTrip(featuresArb, encodePlxFeatures, decodePlxFeatures));
});

describe("Battery Level 0x2A19, Current Time 0x2A2B, Device Information strings", () => {
  it("battery level round-trips 0–100", () =>
    roundTrip(fc.integer({ min: 0, max: 100 }), encodeBatteryLevel, decodeBatteryLevel));

  it("current time round-trips", () => {
    const arb: fc.Arbitrary<CurrentTime> = fc.record({
      dateTime: dateTimeArb,
      dayOfWeek: fc.integer({ min: 0, max: 7 }),
      fractions256: fc.integer({ min: 0, max: 255 }),
      adjustReason: flagsArb([
        "manualTimeUpdate",
        "externalReferenceTimeUpdate",
        "changeOfTimeZone",
        "changeOfDst",
      ]),
    });
    roundTrip(arb, encodeCurrentTime, decodeCurrentTime);
  });

  it("current time of an epoch instant carries the weekday and 1/256 s", () => {
    // 2024-10-16T04:10:28.500Z was a Wednesday.
    const t = currentTimeAt(Date.UTC(2024, 9, 16, 4, 10, 28, 500), {
      manualTimeUpdate: false,
      externalReferenceTimeUpdate: true,
      changeOfTimeZone: false,
      changeOfDst: false,
    });
    expect(hex(encodeCurrentTime(t))).toBe("e8070a10040a1c038002");
  });

  it("refuses a device information string that is not UTF-8, naming the first bad byte", () => {
    const name: DeviceInformationUuid = "2A29"; // Manufacturer Name String
    const refusal = (value: string) => {
      try {
        decodeDeviceInformationString(name, Buffer.from(value, "hex"));
      } catch (error) {
        return (
          (error as { code: string; details: unknown }).code +
          JSON.stringify((error as { details: unknown }).details)
        );
      }
      return "decoded";
    };
    // RFC 3629 §4: a surrogate, an overlong form, a sequence cut short, a stray continuation.
    expect(refusal("4142eda080")).toBe('E_CODEC_RANGE{"field":"value","offset":2}');
    expect(refusal("41c0af")).toBe('E_CODEC_RANGE{"field":"value","offset":1}');
    expect(refusal("414243e282")).toBe('E_CODEC_RANGE{"field":"value","offset":3}');
    expect(refusal("80")).toBe('E_CODEC_RANGE{"field":"value","offset":0}');
    // U+FFFD sent as such, and a four-byte character, are text.
    expect(refusal("efbfbdf09f9880")).toBe("decoded");
  });

  it("device information strings round-trip as UTF-8", () => {
    const uuids = Object.keys(DEVICE_INFORMATION_STRINGS) as DeviceInformationUuid[];
    fc.assert(
      fc.property(
        fc.constantFrom(...uuids),
        fc.string({ unit: "grapheme", maxLength: 100 }),
        (uuid, text) => {
          expect(
            decodeDeviceInformationString(uuid, encodeDeviceInformationString(uuid, text)),
          ).toBe(text);
        },
      ),
      RUNS,
    );
  });

  it("reading context round-trips", () =>
    roundTrip(
      fc.record({
        timezoneOffset: fc.integer({ min: -12, max: 14 }),
        measurementIndex: maybe(fc.integer({ min: 1, max: 0xffffffff })),
      }),
      encodeReadingContext,
      decodeReadingContext,
    ));
});
