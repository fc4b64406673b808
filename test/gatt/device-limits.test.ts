/**
 * What real SIG devices send at the edges of what they measure: 11073-20601 special values
 * (NaN for "no valid value", ±INF with the glucose sensor status bits) and finer resolutions
 * than the lab reports. Each case starts from a reading the lab encodes, with one field changed
 * as such a device would send it.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import {
  decodeBloodPressureMeasurement,
  encodeBloodPressureMeasurement,
} from "../../src/gatt/characteristics/blood-pressure.ts";
import {
  decodeGlucoseMeasurement,
  encodeGlucoseMeasurement,
} from "../../src/gatt/characteristics/glucose-measurement.ts";
import {
  decodePlxSpotCheckMeasurement,
  encodePlxSpotCheckMeasurement,
} from "../../src/gatt/characteristics/plx-measurement.ts";
import {
  decodeWeightMeasurement,
  encodeWeightMeasurement,
} from "../../src/gatt/characteristics/weight.ts";
import { type CharacteristicValue, mappingFor } from "../../src/gatt/mapping.ts";
import { SPECIAL } from "../../src/gatt/medfloat.ts";
import { SIG } from "../../src/gatt/uuids.ts";
import { generate } from "../readings/helpers.ts";

const catalogue = Catalogue.load();

/** A reading of `device` as the lab encodes it, with the value of `uuid` rewritten. */
function sentAs(device: string, uuid: string, rewrite: (value: Uint8Array) => Uint8Array) {
  const profile = catalogue.get(device);
  const [reading] = generate(device, "normal", { days: 3 });
  const values: CharacteristicValue[] = mappingFor(profile)
    .encode(reading!, profile, 1)
    .map((v) => (v.uuid === uuid ? { ...v, value: rewrite(v.value) } : v));
  return { reading: reading!, decoded: mappingFor(profile).decode(values, profile) };
}

describe("SIG devices at the edges of what they measure", () => {
  it("a blood pressure with a NaN pulse rate keeps its pressure and leaves the pulse out", () => {
    const { reading, decoded } = sentAs("Vendor BPM - Wide Range", "2A35", (v) =>
      encodeBloodPressureMeasurement({
        ...decodeBloodPressureMeasurement(v),
        pulseRate: SPECIAL.nan,
      }),
    );
    const metrics = decoded.records.map((r) => r.metric);
    expect(metrics).toContain("blood_pressure");
    expect(metrics).not.toContain("pulse");
    expect(decoded.records.find((r) => r.metric === "blood_pressure")).toEqual(
      reading.records.find((r) => r.metric === "blood_pressure"),
    );
  });

  it("a glucose below what the meter can read (-INF, sensor status bit 6) is the bottom of the range, with no alert", () => {
    const { decoded } = sentAs("Vendor Glucometer", SIG.characteristics.glucoseMeasurement, (v) => {
      const m = decodeGlucoseMeasurement(v);
      return encodeGlucoseMeasurement({
        ...m,
        concentration: { ...m.concentration!, value: SPECIAL["-inf"] },
        // Every other status bit as the lab sent it (all clear for an in-range reading).
        sensorStatus: { ...m.sensorStatus!, resultLowerThanDeviceCanProcess: true },
      });
    });
    const glucose = decoded.records.find((r) => r.metric === "glucose")!;
    expect(glucose.value_1).toBe(20);
    expect(glucose.filter_params).not.toHaveProperty("alert");
  });

  it("a weight in pounds at a scale's finer resolution is reported to the lab's 0.2 lb step", () => {
    const weightOf = (pounds: number) =>
      sentAs("Vendor Scale", SIG.characteristics.weightMeasurement, (v) =>
        encodeWeightMeasurement({
          ...decodeWeightMeasurement(v),
          unit: "imperial",
          weight: pounds,
        }),
      ).decoded.records.find((r) => r.metric === "weight")!.value_1;
    expect(weightOf(176.3)).toBe(176.4);
    expect(weightOf(176.21)).toBe(176.2);
    expect(weightOf(176.4)).toBe(176.4);
  });

  it("a perfusion index at an oximeter's finer resolution is reported to the lab's 0.1 % step, with its SpO2", () => {
    const sent = (pai: number) =>
      sentAs("Vendor Pulse Ox", SIG.characteristics.plxSpotCheckMeasurement, (v) =>
        encodePlxSpotCheckMeasurement({
          ...decodePlxSpotCheckMeasurement(v),
          pulseAmplitudeIndex: pai,
        }),
      );
    const piOf = (pai: number) =>
      sent(pai).decoded.records.find((r) => r.metric === "perfusion_index")!.value_1;
    expect(piOf(1.26)).toBe(1.3);
    expect(piOf(4.04)).toBe(4);
    expect(piOf(2.5)).toBe(2.5);
    const { reading, decoded } = sent(1.26);
    expect(decoded.records.find((r) => r.metric === "spO2")).toEqual(
      reading.records.find((r) => r.metric === "spO2"),
    );
  });
});
