import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/** Share of blows made with poor effort (a real and common source of low readings). */
const POOR_EFFORT_RATE = 0.05;

/**
 * Peak flow meter (spec 2.8): peak expiratory flow (L/min) and FEV1 (L) of one blow, from the
 * patient's airflow (morning dip, exacerbations) and the effort of the blow.
 */
export const spirometry: Capability = {
  name: "spirometry",
  metrics: ["peak_expiratory_flow", "forced_expiratory_volume"],
  bind(ctx) {
    const pef = metric(ctx, "peak_expiratory_flow");
    const fev1 = metric(ctx, "forced_expiratory_volume");
    const { patient, rng } = ctx;
    const sd = patient.model.physiology.respiratory.reading_sd_fraction;
    return {
      emit(m, out) {
        const effort = rng.chance(POOR_EFFORT_RATE) ? rng.uniform(0.7, 0.9) : 1;
        const blow = effort * (1 + rng.normal(0, sd));
        // FEV1 tracks the same blow closely, with a little independent variation.
        const volume = blow * (1 + rng.normal(0, sd / 2));
        if (pef !== undefined) out.add(pef, patient.peakFlow(m.t) * blow, null, null);
        if (fev1 !== undefined) out.add(fev1, patient.fev1(m.t) * volume, null, null);
      },
    };
  },
};
