import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import { Rng } from "../core/rng.ts";
import { drawDuration, processedAt } from "../fulfilment/shipment-plan.ts";
import { drawTracking } from "../fulfilment/tracking.ts";
import type { Ms } from "../store/types.ts";
import type { SupplyRequestPatch, SupplyRequestRow } from "../store/types-asr.ts";

/**
 * A supply order's life on the clock (README "ASR"): placed (pending) → shipped after the
 * warehouse's processing time in business days (fulfilled, spec 3: "fulfilled (shipped)", with a
 * carrier and tracking) → delivered after the carrier's time (delivered_on). The durations are
 * the fulfilment simulator's (`processing`; `first_scan` + `in_transit` + `out_for_delivery`),
 * drawn from the order's own stream per step, so a seed gives the same timeline at any clock
 * speed and across restarts. Supplies are small parcels: no stock shortage, no delivery issue.
 */

function stepRng(config: FulfilmentConfig, id: string, step: number): Rng {
  return new Rng(config.seed).fork(`supply/${id}/${step}`);
}

/** When a request placed at `at` ships. */
export function shipsAt(config: FulfilmentConfig, id: string, at: Ms): Ms {
  return processedAt(config, stepRng(config, id, 0), at);
}

/** The next step of an order whose step is due at `at`, or null when it has none left. */
export function nextStep(
  config: FulfilmentConfig,
  row: SupplyRequestRow,
  at: Ms,
): SupplyRequestPatch | null {
  const rng = stepRng(config, row.id, row.step + 1);
  if (row.status === "pending") {
    const { durations } = config;
    const carrierTime = [durations.firstScan, durations.inTransit, durations.outForDelivery]
      .map((range) => drawDuration(config, rng, range))
      .reduce((a, b) => a + b, 0);
    const tracking = drawTracking(config, rng.fork("tracking"));
    return {
      status: "fulfilled",
      shippedOn: at,
      carrier: tracking.carrier,
      trackingNumber: tracking.trackingNumber,
      trackingLink: tracking.trackingLink,
      nextAt: at + carrierTime,
    };
  }
  if (row.deliveredOn === null) return { deliveredOn: at, nextAt: null };
  return null;
}
