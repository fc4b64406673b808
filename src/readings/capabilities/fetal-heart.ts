import { enumValues } from "../plan.ts";
import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/** Share of failed readings that are zeros (probe off the heart) rather than erratic values. */
const ZEROS_SHARE = 0.6;

/**
 * Fetal doppler (spec 2.8): a fetal_pulse in beats per minute, or, when the 6-second capture
 * fails, an invalid_event whose `error` says why (the profile's two texts: some values were 0,
 * or the range exceeded 5 %). A patient who is not pregnant gives only zero captures.
 */
export const fetalHeart: Capability = {
  name: "fetal-heart",
  metrics: ["fetal_pulse", "invalid_event"],
  bind(ctx) {
    const pulse = metric(ctx, "fetal_pulse");
    const invalid = metric(ctx, "invalid_event");
    const { patient, rng, plan } = ctx;
    const errors = enumValues(plan, "error");
    // The profile lists the spec's texts; tell them apart by content, falling back to order.
    const zeros = errors.find((e) => /\b0\b|zero/i.test(e)) ?? errors[0];
    const spread = errors.find((e) => e !== zeros) ?? zeros;
    const pregnancy = patient.model.physiology.pregnancy;
    return {
      emit(m, out) {
        const rate = patient.fetalHeartRate(m.t);
        const failed = rng.chance(pregnancy?.invalid_rate ?? 1);
        const error = rate === undefined || rng.chance(ZEROS_SHARE) ? zeros : spread;
        const value = (rate ?? 0) + rng.normal(0, pregnancy?.reading_sd ?? 0);
        if (failed || rate === undefined) {
          if (invalid !== undefined) out.add(invalid, 1, null, { error });
        } else if (pulse !== undefined) {
          out.add(pulse, value, null, null);
        }
      },
    };
  },
};
