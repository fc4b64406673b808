import { enumValue } from "../plan.ts";
import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/** Share of glucose tests taken at an alternative site (forearm, palm) instead of a finger. */
const ALTERNATIVE_SITE_RATE = 0.05;

/**
 * Glucometer (spec 2.8): glucose in mg/dL with meal_context from the patient's meals and
 * measurement_location. A result above the meter's range becomes the profile's above_range
 * report (the top of the range with alert = sensor_result_above_range): the builder does that.
 */
export const glucose: Capability = {
  name: "glucose",
  metrics: ["glucose"],
  bind(ctx) {
    const g = metric(ctx, "glucose");
    const { patient, rng, plan } = ctx;
    const has = (key: string) => g?.keys.includes(key) === true;
    const meal = has("meal_context")
      ? {
          fasting: enumValue(plan, "meal_context", "fasting"),
          "pre-prandial": enumValue(plan, "meal_context", "pre-prandial"),
          "post-prandial": enumValue(plan, "meal_context", "post-prandial"),
        }
      : undefined;
    const finger = has("measurement_location")
      ? enumValue(plan, "measurement_location", "finger")
      : undefined;
    const alternative = has("measurement_location")
      ? enumValue(plan, "measurement_location", "alternative site")
      : undefined;
    const sdFraction = patient.model.physiology.glucose.reading_sd_fraction;
    return {
      emit(m, out) {
        const value = patient.glucose(m.t) * (1 + rng.normal(0, sdFraction));
        const site = rng.chance(ALTERNATIVE_SITE_RATE) ? alternative : finger;
        if (g === undefined) return;
        out.add(g, value, null, {
          meal_context: meal?.[patient.mealContext(m.t)],
          measurement_location: site,
        });
      },
    };
  },
};
