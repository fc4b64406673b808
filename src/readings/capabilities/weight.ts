import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/** Scale (spec 2.8): body weight in pounds, with the patient's trend and fluid-gain episodes. */
export const weight: Capability = {
  name: "weight",
  metrics: ["weight"],
  bind(ctx) {
    const w = metric(ctx, "weight");
    const { patient, rng } = ctx;
    const sd = patient.model.physiology.weight.reading_sd;
    return {
      emit(m, out) {
        const noise = rng.normal(0, sd);
        if (w !== undefined) out.add(w, patient.weight(m.t) + noise, null, null);
      },
    };
  },
};
