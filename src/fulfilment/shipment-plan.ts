import type { MsRange } from "../config/duration.ts";
import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import { Rng } from "../core/rng.ts";
import type { Ms } from "../store/types.ts";
import type { ShipmentRow } from "../store/types-shipments.ts";
import { addBusinessTime } from "./business-time.ts";
import { PICKED_UP, type ShipmentStep } from "./shipment-flow.ts";

/**
 * What happens next to a shipment, decided by its seeded Rng (issue 4 §2, README
 * "Fulfilment"). Pure: the same shipment state, configuration and seed always give the same
 * next step at the same time.
 *
 * Each transition draws from its own stream, `fork("shipment/<id>/<step>")` of the configured
 * seed: the draws of step 5 depend only on the shipment and the step, not on what was drawn
 * before, so a restart (which loses in-memory Rng state) or an admin's intervention changes
 * nothing about the draws of later steps but their starting state.
 */
export function shipmentRng(config: FulfilmentConfig, shipmentId: string, step: number): Rng {
  return new Rng(config.seed).fork(`shipment/${shipmentId}/${step}`);
}

/** A duration drawn uniformly from a range, then compressed by `time_scale`. */
export function drawDuration(config: FulfilmentConfig, rng: Rng, range: MsRange): number {
  const ms = range.minMs === range.maxMs ? range.minMs : rng.uniform(range.minMs, range.maxMs);
  return Math.round(ms / config.timeScale);
}

/**
 * When the warehouse has processed an order accepted at `at`: `durations.processing` of
 * business time, weekends counted on the calendar as if the lab ran at real speed, then the
 * whole wait divided by time_scale — so `1440` ships in minutes what takes days, a weekend
 * included (devices and supply orders alike).
 */
export function processedAt(config: FulfilmentConfig, rng: Rng, at: Ms): Ms {
  const { processing } = config.durations;
  const raw =
    processing.minMs === processing.maxMs
      ? processing.minMs
      : rng.uniform(processing.minMs, processing.maxMs);
  return at + Math.round((addBusinessTime(at, raw) - at) / config.timeScale);
}

/** Spec 3: an accepted request goes On Hold on a (seeded) stock shortage, else Ready to Ship. */
export function acceptance(config: FulfilmentConfig, rng: Rng): "On Hold" | "Ready to Ship" {
  return rng.fork("stock").chance(config.probabilities.stockShortage) ? "On Hold" : "Ready to Ship";
}

export interface PlannedStep {
  readonly status: ShipmentStep;
  readonly at: Ms;
}

/** What the shipment needs to know about itself to plan its next step. */
export type PlanState = Pick<
  ShipmentRow,
  | "status"
  | "reason"
  | "requireSignature"
  | "scansPlanned"
  | "scansDone"
  | "transitMs"
  | "attempts"
  | "deliveredOn"
>;

const DUPLICATE = "duplicate submission";

/**
 * The next step after the shipment entered its current status at `at`, or null when nothing
 * happens on its own: a request waiting for the client, a closed order, a package collected.
 */
export function planNext(
  config: FulfilmentConfig,
  rng: Rng,
  state: PlanState,
  at: Ms,
): PlannedStep | null {
  const d = config.durations;
  const p = rng.fork("plan");
  const after = (range: MsRange) => at + drawDuration(config, p, range);
  switch (state.status) {
    case "Client Action Required":
      // Spec 3 "cancelled (for example duplicate clean-up)": the vendor's team removes a
      // duplicate the client leaves alone; an address problem waits for the client.
      if (d.duplicateCleanup === null || !state.reason?.startsWith(DUPLICATE)) return null;
      return { status: "Cancelled", at: after(d.duplicateCleanup) };
    case "On Hold":
      return { status: "Ready to Ship", at: after(d.restock) };
    case "Ready to Ship":
      return { status: "Dropshipped", at: processedAt(config, p, at) };
    case "Dropshipped":
      return { status: "In Transit", at: after(d.firstScan) };
    case "In Transit": {
      const planned = Math.max(1, state.scansPlanned);
      const gap = Math.round((state.transitMs / planned) * p.uniform(0.7, 1.3));
      if (state.scansDone < planned) return { status: "In Transit", at: at + gap };
      const held = p.chance(config.probabilities.carrierHold);
      return { status: held ? "Available for Pickup" : "Out for Delivery", at: at + gap };
    }
    case "Out for Delivery": {
      const chance = state.requireSignature
        ? config.probabilities.deliveryIssueSignature
        : config.probabilities.deliveryIssue;
      const issue = p.chance(chance);
      return { status: issue ? "Delivery Issue" : "Delivered", at: after(d.outForDelivery) };
    }
    case "Delivery Issue": {
      const exhausted = state.attempts >= config.maxDeliveryAttempts;
      return {
        status: exhausted ? "Available for Pickup" : "Out for Delivery",
        at: after(d.reattempt),
      };
    }
    case "Available for Pickup":
      return state.deliveredOn === null ? { status: PICKED_UP, at: after(d.pickup) } : null;
    default:
      return null;
  }
}

/**
 * The carrier's leg, drawn when the package ships: how many in-transit scans it gets and how
 * long it spends in transit (scaled), so the order can show an expected delivery date from the
 * moment it ships (spec 6.2: "expected delivery dates").
 */
export function transitPlan(
  config: FulfilmentConfig,
  rng: Rng,
  shippedAt: Ms,
): { scansPlanned: number; transitMs: number; expectedDelivery: Ms } {
  const t = rng.fork("transit");
  const scansPlanned = t.int(config.inTransitScans.min, config.inTransitScans.max);
  const transitMs = drawDuration(config, t, config.durations.inTransit);
  const d = config.durations;
  // The carrier's promise: the latest the plan allows for the first scan and the last leg.
  const expectedDelivery =
    shippedAt +
    Math.round((d.firstScan.maxMs + d.outForDelivery.maxMs) / config.timeScale) +
    Math.round(transitMs * 1.3);
  return { scansPlanned, transitMs, expectedDelivery };
}
