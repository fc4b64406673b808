import { describe, expect, it } from "vitest";
import { isRpmlabError } from "../../src/core/errors.ts";
import { profilePlan, quantize, valuePlan } from "../../src/readings/plan.ts";
import { ReadingBuilder } from "../../src/readings/reading-builder.ts";
import { profile } from "./helpers.ts";

describe("quantize", () => {
  it("rounds to the step without floating-point residue", () => {
    const weight = valuePlan({ meaning: "w", units: "lb", min: 5, max: 400, step: 0.2 });
    expect(quantize(weight, 172.35)).toBe(172.4);
    expect(quantize(weight, 172.29)).toBe(172.2);
    const fev1 = valuePlan({ meaning: "v", units: "L", min: 0.1, max: 8, step: 0.01 });
    expect(String(quantize(fev1, 1.2345))).toBe("1.23");
    expect(String(quantize(fev1, 0.7 + 0.1))).toBe("0.8");
  });

  it("clamps into the range, at multiples of the step", () => {
    const plan = valuePlan({ meaning: "x", units: "u", min: 0.3, max: 9.9, step: 0.5 });
    expect(quantize(plan, -4)).toBe(0.5);
    expect(quantize(plan, 50)).toBe(9.5);
    const battery = valuePlan({ meaning: "b", units: "%", min: 0, max: 100, step: 1 });
    expect(Object.is(quantize(battery, -0.2), 0)).toBe(true);
  });
});

describe("ReadingBuilder", () => {
  const bpm = profilePlan(profile("Vendor BPM - Wide Range"));
  const m = (name: string) => bpm.byName.get(name)!;

  it("returns records in profile order with one shared measurement_index", () => {
    const builder = new ReadingBuilder(bpm);
    builder.begin(41);
    builder.add(m("battery_percentage"), 77.4, null, null);
    builder.add(m("pulse"), 71.6, 3, null);
    builder.add(m("blood_pressure"), 121.5, 79.2, null);
    const records = builder.finish();
    expect(records).toEqual([
      {
        metric: "blood_pressure",
        value_1: 122,
        value_2: 79,
        filter_params: { measurement_index: 41 },
      },
      { metric: "pulse", value_1: 72, value_2: null, filter_params: { measurement_index: 41 } },
      {
        metric: "battery_percentage",
        value_1: 77,
        value_2: null,
        filter_params: { measurement_index: 41 },
      },
    ]);
    builder.begin(42);
    expect(builder.finish()).toEqual([]);
  });

  it("refuses a metric twice in one reading and a missing value 2", () => {
    const builder = new ReadingBuilder(bpm);
    builder.begin(1);
    builder.add(m("pulse"), 70, null, null);
    expect(() => builder.add(m("pulse"), 70, null, null)).toThrow(/twice/);
    expect(() => builder.add(m("blood_pressure"), 120, null, null)).toThrow(/value 2/);
  });

  it("reports a glucose above range as the profile's HI with the alert, and keeps listed keys only", () => {
    const plan = profilePlan(profile("Vendor Glucometer"));
    const glucose = plan.byName.get("glucose")!;
    const builder = new ReadingBuilder(plan);
    builder.begin(1);
    builder.add(glucose, 731, null, {
      meal_context: "fasting",
      measurement_location: "finger",
      other: "x",
    });
    const [high] = builder.finish();
    expect(high).toEqual({
      metric: "glucose",
      value_1: 600,
      value_2: null,
      filter_params: {
        meal_context: "fasting",
        measurement_location: "finger",
        alert: "sensor_result_above_range",
      },
    });
    builder.begin(2);
    builder.add(glucose, 599.6, null, { meal_context: "fasting", measurement_location: "finger" });
    expect(builder.finish()[0]!.filter_params).toEqual({
      meal_context: "fasting",
      measurement_location: "finger",
    });
  });

  it("fails loudly when a required filter param has no value", () => {
    const plan = profilePlan(profile("Vendor Glucometer"));
    const builder = new ReadingBuilder(plan);
    builder.begin(1);
    let error: unknown;
    try {
      builder.add(plan.byName.get("glucose")!, 100, null, { meal_context: "fasting" });
    } catch (e) {
      error = e;
    }
    expect(isRpmlabError(error, "E_PROFILE_INVALID")).toBe(true);
    expect(String(error)).toContain("measurement_location");
  });
});
