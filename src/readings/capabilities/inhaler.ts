import type { Rng } from "../../core/rng.ts";
import type { MetricPlan, ProfilePlan } from "../plan.ts";
import { enumValues } from "../plan.ts";
import type { ReadingBuilder } from "../reading-builder.ts";
import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/** Doses in a full canister; the sensor is moved to a new canister when one runs out. */
const CANISTER_DOSES = 60;

/** Chance that a flag of each known name is 1 (spec 2.8 inhaler flags). */
const FLAG_ONE_RATE: Readonly<Record<string, number>> = {
  flow_error: 0.03,
  exhalation_detected: 0.05,
  respiration_enabled: 1,
  orientation_enabled: 1,
  orientation_stored: 1,
};

type FlagKind = "bit" | "positive_integer";

/** The flag names and kinds the profile defines for each metric ("flags" filter param). */
function flagTable(plan: ProfilePlan): ReadonlyMap<string, ReadonlyArray<[string, FlagKind]>> {
  const spec = plan.params.get("flags");
  const table = new Map<string, Array<[string, FlagKind]>>();
  if (spec?.kind !== "flags") return table;
  for (const [name, flags] of Object.entries(spec.by_metric)) {
    table.set(name, Object.entries(flags) as Array<[string, FlagKind]>);
  }
  return table;
}

/** The state of one dose that flags are derived from. */
interface Dose {
  maxFlow: number;
  shakeValid: boolean;
  orientationValid: boolean;
}

function flagsFor(
  table: ReadonlyArray<[string, FlagKind]> | undefined,
  dose: Dose,
  rng: Rng,
): Record<string, number> {
  const flags: Record<string, number> = {};
  if (table === undefined) return flags;
  for (const [name, kind] of table) {
    if (kind === "positive_integer") {
      // shake_intensity: a vigorous valid shake scores high.
      flags[name] = dose.shakeValid ? rng.int(4, 10) : rng.int(1, 4);
    } else if (name === "inhalation_valid") {
      flags[name] = dose.maxFlow >= 30 ? 1 : 0;
    } else if (name === "orientation_valid") {
      flags[name] = dose.orientationValid ? 1 : 0;
    } else {
      flags[name] = rng.chance(FLAG_ONE_RATE[name] ?? 0) ? 1 : 0;
    }
  }
  return flags;
}

/**
 * Inhaler sensor (spec 2.8): one reading per inhaler use with the medication event, turbohaler
 * rotation, respiratory flow and timing logs, shake detection and cap event, each with the
 * inhaler angle and its per-metric flags where the profile lists them; installed events when the
 * sensor goes onto or comes off a canister. serial_number (a device constant) and
 * device_log_index (the reading's index) come from the builder.
 */
const METRICS = [
  "inhaler_medication_event",
  "inhaler_turbohaler_rotation_event",
  "inhaler_respiratory_flow_log",
  "inhaler_respiratory_timing_log",
  "inhaler_shake_detection_event",
  "inhaler_inhaler_installed_event",
  "inhaler_medication_cap_event",
] as const;

export const inhaler: Capability = {
  name: "inhaler",
  metrics: METRICS,
  bind(ctx) {
    const [medication, rotation, flowLog, timingLog, shake, installed, cap] = METRICS.map((n) =>
      metric(ctx, n),
    );
    const { patient, rng, plan } = ctx;
    const flags = flagTable(plan);
    const angles = enumValues(plan, "angle");
    const notAvailable = angles.find((a) => /^n\/?a$/i.test(a));
    const upright = angles.filter((a) => a !== notAvailable);
    const flowMean = patient.model.physiology.respiratory.inspiratory_flow_l_min;
    let remaining = rng.fork("canister").int(10, CANISTER_DOSES);
    let first = true;

    // Created once per device (not per record): adds one record with the dose's filter params.
    const add = (
      out: ReadingBuilder,
      m: MetricPlan | undefined,
      v1: number,
      v2: number | null,
      angle: string | undefined,
      dose: Dose,
    ) => {
      if (m === undefined) return;
      out.add(m, v1, v2, {
        angle,
        flags: flagsFor(flags.get(m.name), dose, rng),
      });
    };
    return {
      emit(m, out) {
        const factor = patient.airflowFactor(m.t);
        const maxFlow = flowMean * factor * (1 + rng.normal(0, 0.12));
        const dose: Dose = {
          maxFlow,
          shakeValid: rng.chance(0.85),
          orientationValid: rng.chance(0.95),
        };
        // Mostly held upright (0–45°), sometimes tilted further.
        const angle = !dose.orientationValid
          ? (notAvailable ?? upright[0])
          : upright.length === 0
            ? notAvailable
            : rng.chance(0.9)
              ? upright[Math.min(upright.length - 1, rng.chance(0.75) ? 0 : 1)]
              : rng.pick(upright);
        const duration = Math.max(0.3, rng.normal(1.6 + 0.8 * factor, 0.4));
        const timeToPeak = duration * rng.uniform(0.15, 0.35);
        const shakeDuration = dose.shakeValid
          ? Math.max(1.5, rng.normal(3.5, 1))
          : rng.uniform(0.2, 1.2);
        const click = rng.chance(0.92);
        const capOn = rng.chance(0.9);

        const newCanister = remaining === 0;
        if (newCanister) remaining = CANISTER_DOSES;
        remaining--;
        add(out, medication, 1, null, angle, dose);
        add(out, rotation, click ? 1 : 0, null, angle, dose);
        add(out, flowLog, maxFlow, maxFlow * rng.uniform(0.55, 0.75), angle, dose);
        add(out, timingLog, duration, timeToPeak, angle, dose);
        add(out, shake, dose.shakeValid ? 1 : 0, shakeDuration, angle, dose);
        // Installed on the first use we see and on each new canister; removed when one empties.
        if (first || newCanister) add(out, installed, 1, null, angle, dose);
        else if (remaining === 0) add(out, installed, 0, null, angle, dose);
        add(out, cap, capOn ? 1 : 0, null, angle, dose);
        first = false;
      },
    };
  },
};
