import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/** Narrowest pulse pressure a cuff reports; keeps diastolic below systolic under noise. */
const MIN_PULSE_PRESSURE = 15;

/**
 * Oscillometric cuff (spec 2.8 blood pressure monitor): systolic/diastolic with the patient's
 * circadian pattern, the pulse rate the cuff counts, and an irregular-heartbeat record (value 1)
 * only in readings where one is detected.
 */
export const bloodPressure: Capability = {
  name: "blood-pressure",
  metrics: ["blood_pressure", "pulse", "irregular_heartbeat"],
  bind(ctx) {
    const bp = metric(ctx, "blood_pressure");
    const pulse = metric(ctx, "pulse");
    const irregular = metric(ctx, "irregular_heartbeat");
    const { patient, rng } = ctx;
    const model = patient.model.physiology;
    const sd = model.blood_pressure.reading_sd;
    return {
      emit(m, out) {
        // Draw every value whether or not the profile lists the metric, so cuff variants of one
        // patient keep the same draw sequence.
        const noise = rng.normal(0, sd);
        const diastolicNoise = 0.5 * noise + rng.normal(0, sd * 0.6);
        const detected = rng.chance(model.blood_pressure.irregular_heartbeat_rate);
        const pulseNoise = rng.normal(0, model.heart_rate.reading_sd * (detected ? 2 : 1));
        const systolic = patient.systolic(m.t) + noise;
        const diastolic = Math.min(
          patient.diastolic(m.t) + diastolicNoise,
          systolic - MIN_PULSE_PRESSURE,
        );
        if (bp !== undefined) out.add(bp, systolic, diastolic, null);
        if (pulse !== undefined) out.add(pulse, patient.heartRate(m.t) + pulseNoise, null, null);
        if (irregular !== undefined && detected) out.add(irregular, 1, null, null);
      },
    };
  },
};
