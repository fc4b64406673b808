import { RpmlabError } from "../../core/errors.ts";
import type { Capability } from "./capability.ts";
import { metric } from "./capability.ts";

/** Chance, at a companion reading, that the patient is not near the tracked beacon. */
const AWAY_RATE = 0.12;
/** Chance per companion reading that the beacon is swapped for a new one. */
const BEACON_SWAP_RATE = 0.01;

/**
 * Proximity band (spec 2.8, "sent only along with another device's metrics"): at each reading
 * of the companion device, whether the band is in proximity of the tracked beacon (1 enters,
 * 0 leaves); beacon_id_event 1 when a beacon is associated (first reading, and after a swap),
 * 0 when the old one is removed. beacon_id is the beacon's 12-character MAC address.
 */
export const proximity: Capability = {
  name: "proximity",
  metrics: ["beacon_proximity_event", "beacon_id_event"],
  bind(ctx) {
    const near = metric(ctx, "beacon_proximity_event");
    const association = metric(ctx, "beacon_id_event");
    const { rng, plan } = ctx;
    const beacons = rng.fork("beacons");
    const pattern = plan.params.get("beacon_id");
    const newBeacon = () => {
      const id = beacons.hex(12);
      if (pattern?.kind === "pattern" && !new RegExp(pattern.pattern).test(id)) {
        throw new RpmlabError(
          "E_PROFILE_INVALID",
          `beacon id ${id} does not match ${plan.profile.name}'s pattern ${pattern.pattern}`,
          { field: "filter_params.beacon_id" },
        );
      }
      return id;
    };
    let beacon = newBeacon();
    let associated = false;
    return {
      emit(_moment, out) {
        const away = rng.chance(AWAY_RATE);
        const swap = rng.chance(BEACON_SWAP_RATE);
        if (associated && swap) {
          // The old beacon is removed; the new one is associated at the next reading.
          if (association !== undefined) out.add(association, 0, null, { beacon_id: beacon });
          beacon = newBeacon();
          associated = false;
          return;
        }
        if (!associated && association !== undefined) {
          out.add(association, 1, null, { beacon_id: beacon });
        }
        associated = true;
        if (near !== undefined) out.add(near, away ? 0 : 1, null, { beacon_id: beacon });
      },
    };
  },
};
