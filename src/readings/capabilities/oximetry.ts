import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/**
 * Fingertip pulse oximeter (spec 2.8): spO2, pulse and perfusion index. The cellular model
 * reports each as a mean over its sampling window with value 2 the standard deviation; the
 * builder drops value 2 for profiles that have none.
 */
export const oximetry: Capability = {
  name: "oximetry",
  metrics: ["spO2", "pulse", "perfusion_index"],
  bind(ctx) {
    const spo2 = metric(ctx, "spO2");
    const pulse = metric(ctx, "pulse");
    const perfusion = metric(ctx, "perfusion_index");
    const { patient, rng } = ctx;
    const p = patient.model.physiology;
    return {
      emit(m, out) {
        const spo2Value = patient.spo2(m.t) + rng.normal(0, p.oxygen.reading_sd);
        const spo2Sd = 0.2 + Math.abs(rng.normal(0.6, 0.3));
        const pulseValue = patient.heartRate(m.t) + rng.normal(0, p.heart_rate.reading_sd);
        const pulseSd = 0.5 + Math.abs(rng.normal(1.8, 0.8));
        // Perfusion index varies a lot between readings (finger temperature, placement).
        const pi = patient.perfusionIndex(m.t) * Math.exp(rng.normal(0, 0.35));
        const piSd = pi * rng.uniform(0.05, 0.2);
        if (spo2 !== undefined) out.add(spo2, spo2Value, spo2Sd, null);
        if (pulse !== undefined) out.add(pulse, pulseValue, pulseSd, null);
        if (perfusion !== undefined) out.add(perfusion, pi, piSd, null);
      },
    };
  },
};
