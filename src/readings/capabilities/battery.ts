import type { ProfileFamily } from "../../catalogue/schema.ts";
import { MS_PER_DAY } from "../../core/time.ts";
import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/**
 * Battery drain in percent: per use (motor, display, radio) and per day idle. Not in the
 * profiles (the schema has no field for it): rough figures for each kind of device, so that a
 * month of readings shows a visible drain and some devices run low.
 */
const DRAIN: Readonly<Record<ProfileFamily, { perUse: number; perDay: number }>> = {
  scale: { perUse: 0.15, perDay: 0.05 },
  pulse_oximeter: { perUse: 0.4, perDay: 0.05 },
  blood_pressure_monitor: { perUse: 0.5, perDay: 0.05 },
  glucometer: { perUse: 0.2, perDay: 0.05 },
  peak_flow_meter: { perUse: 0.2, perDay: 0.05 },
  fetal_doppler: { perUse: 1, perDay: 0.05 },
  inhaler_sensor: { perUse: 0.1, perDay: 0.15 },
  medication_cap_sensor: { perUse: 0.1, perDay: 0.1 },
  proximity_band: { perUse: 0.05, perDay: 0.3 },
};
/** A direct-cellular device powers a modem for each upload. */
const CELLULAR_USE_FACTOR = 2.5;
/** Thresholds of low_battery_event: 0 "low", then 1 "critical" (spec 2.8 inhaler). */
const LOW = 20;
const CRITICAL = 10;
/** Below this the device stops; the patient fits new batteries before the next reading. */
const EMPTY = 3;

/**
 * Battery (spec 2.8 battery_percentage; low_battery_event of the inhaler and medication cap):
 * a level that starts somewhere between half and full, drains with use and time, and jumps back
 * to 100 when the patient replaces the batteries. low_battery_event fires once when the level
 * crosses the low threshold, and where the profile has two levels (inhaler: 0 low, 1 critical)
 * once more at critical.
 */
export const battery: Capability = {
  name: "battery",
  metrics: ["battery_percentage", "low_battery_event"],
  bind(ctx) {
    const percentage = metric(ctx, "battery_percentage");
    const lowEvent = metric(ctx, "low_battery_event");
    const profile = ctx.plan.profile;
    const drain = DRAIN[profile.family];
    const perUse = drain.perUse * (profile.connectivity === "cellular" ? CELLULAR_USE_FACTOR : 1);
    const { rng } = ctx;
    // Two levels (0 low, 1 critical) only where the profile's range includes 0; else one (1).
    const twoLevels = lowEvent !== undefined && lowEvent.value1.low <= 0;
    let level = rng.uniform(50, 100);
    let last: number | undefined;
    let warnedLow = false;
    let warnedCritical = false;
    return {
      emit(m, out) {
        if (last !== undefined) level -= (drain.perDay * (m.t - last)) / MS_PER_DAY;
        last = m.t;
        if (level <= EMPTY) {
          level = 100;
          warnedLow = false;
          warnedCritical = false;
        }
        const jitter = rng.normal(0, 0.3);
        if (percentage !== undefined) out.add(percentage, level + jitter, null, null);
        if (lowEvent !== undefined) {
          if (twoLevels && level <= CRITICAL && !warnedCritical) {
            out.add(lowEvent, 1, null, null);
            warnedCritical = true;
            warnedLow = true;
          } else if (level <= LOW && !warnedLow) {
            out.add(lowEvent, twoLevels ? 0 : 1, null, null);
            warnedLow = true;
          }
        }
        level -= perUse;
      },
    };
  },
};
