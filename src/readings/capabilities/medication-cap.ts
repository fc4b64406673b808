import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/** Chance per cycle that the gateway corrects the cap's clock (besides the first sync). */
const TIME_UPDATE_RATE = 0.07;

/**
 * Medication cap sensor (spec 2.8, "sends once every 12 hours"). Each cycle is a short session:
 * at its start the cap connects (bluetooth 1), reports the dose (open 1 when the patient took
 * it, else no_measurement_event 1) and, on the first sync or a clock correction,
 * capsensor_time_updated_event; minutes later the cap closes (0) and disconnects (bluetooth 0).
 * Adherence comes from the patient model: missed days and skipped doses are not taken.
 */
export const medicationCap: Capability = {
  name: "medication-cap",
  metrics: [
    "capsensor_open_close_event",
    "no_measurement_event",
    "capsensor_time_updated_event",
    "capsensor_bluetooth_event",
  ],
  bind(ctx) {
    const openClose = metric(ctx, "capsensor_open_close_event");
    const noMeasurement = metric(ctx, "no_measurement_event");
    const timeUpdated = metric(ctx, "capsensor_time_updated_event");
    const bluetooth = metric(ctx, "capsensor_bluetooth_event");
    const { patient, rng } = ctx;
    const skipRate = patient.model.adherence.skipped_reading_rate;
    let opened = false;
    let synced = false;
    return {
      emit(m, out) {
        if (m.kind === "cycle_end") {
          if (opened && openClose !== undefined) out.add(openClose, 0, null, null);
          if (bluetooth !== undefined) out.add(bluetooth, 0, null, null);
          opened = false;
          return;
        }
        const skipped = rng.chance(skipRate);
        const clockFix = rng.chance(TIME_UPDATE_RATE);
        opened = !patient.missedDay(m.day) && !skipped;
        if (bluetooth !== undefined) out.add(bluetooth, 1, null, null);
        if (opened && openClose !== undefined) out.add(openClose, 1, null, null);
        if (!opened && noMeasurement !== undefined) out.add(noMeasurement, 1, null, null);
        if ((!synced || clockFix) && timeUpdated !== undefined) out.add(timeUpdated, 1, null, null);
        synced = true;
      },
    };
  },
};
