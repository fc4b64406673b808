/**
 * The README's table of the fulfilment simulator's transitions (issue 4 §2): what triggers each
 * and which setting times it. The README section is generated from this and from the
 * configuration's defaults (`npm run docs`), so the table cannot drift from the code.
 */
export interface TransitionDoc {
  readonly from: string;
  readonly to: string;
  readonly when: string;
  /** Setting keys (as a config file spells them) whose defaults the table shows. */
  readonly settings: readonly string[];
  /** Said of the timing instead of a setting. */
  readonly note?: string;
}

export const TRANSITION_DOCS: readonly TransitionDoc[] = [
  {
    from: "request¹",
    to: "Ready to Ship",
    when: "accepted: the patient's address is complete and deliverable, and no request of the patient for that device type is pending",
    settings: [],
    note: "at once",
  },
  {
    from: "request¹",
    to: "Client Action Required",
    when: "no patient, an incomplete address, an Invalid one not confirmed, or a duplicate submission (spec 3)",
    settings: [],
    note: "at once",
  },
  {
    from: "request¹ (accepted)",
    to: "On Hold",
    when: "a stock shortage",
    settings: ["probabilities.stock_shortage"],
  },
  {
    from: "Client Action Required",
    to: "Ready to Ship (or On Hold)",
    when: "the client fixes the address or sets confirm_address (PUT/PATCH hwi-patients, PUT hwi-devices)",
    settings: [],
    note: "at once",
  },
  {
    from: "Ready to Ship, On Hold",
    to: "Client Action Required",
    when: "before the request ships, the patient's address is changed to one that is incomplete or fails verification (not confirmed) (PUT/PATCH hwi-patients, PUT hwi-devices), or the device loses its patient (PUT hwi-devices `patient: null`, DELETE hwi-patients)",
    settings: [],
    note: "at once",
  },
  {
    from: "Client Action Required (duplicate)",
    to: "Ready to Ship (or On Hold, or Client Action Required for the address)",
    when: "the request it duplicated is cancelled, or moved to another patient or off its patient (PUT hwi-devices): the earliest duplicate left is the patient's request, no longer cleaned up",
    settings: [],
    note: "at once",
  },
  {
    from: "Client Action Required",
    to: "Cancelled",
    when: "duplicate clean-up: a duplicate the client leaves alone is cancelled, the order removed (`off`: never)",
    settings: ["durations.duplicate_cleanup"],
  },
  { from: "On Hold", to: "Ready to Ship", when: "stock arrives", settings: ["durations.restock"] },
  {
    from: "Ready to Ship",
    to: "Dropshipped",
    when: "the warehouse ships (business days: weekends skipped): hardware assigned, gateway shipped_on, carrier and tracking link",
    settings: ["durations.processing"],
  },
  {
    from: "Dropshipped",
    to: "In Transit",
    when: "the carrier's first scan",
    settings: ["durations.first_scan"],
  },
  {
    from: "In Transit",
    to: "In Transit",
    when: "further scans at carrier hubs, spread over the time in transit",
    settings: ["in_transit_scans", "durations.in_transit"],
  },
  {
    from: "In Transit",
    to: "Out for Delivery",
    when: "after the last scan",
    settings: [],
    note: "end of durations.in_transit",
  },
  {
    from: "In Transit",
    to: "Available for Pickup",
    when: "the carrier holds it at a facility instead (Delivered never fires for it, spec 6.2)",
    settings: ["probabilities.carrier_hold"],
  },
  {
    from: "Out for Delivery",
    to: "Delivered",
    when: "dropped off at the patient's address (signed for with require_signature): `hardware.delivered`, billing starts once device and gateway are both with the patient (see Billing)",
    settings: ["durations.out_for_delivery"],
  },
  {
    from: "Out for Delivery",
    to: "Delivery Issue",
    when: "a failed attempt (more likely when a signature is required)",
    settings: ["probabilities.delivery_issue", "probabilities.delivery_issue_signature"],
  },
  {
    from: "Delivery Issue",
    to: "Out for Delivery",
    when: "the next attempt",
    settings: ["durations.reattempt"],
  },
  {
    from: "Delivery Issue",
    to: "Available for Pickup",
    when: "attempts exhausted",
    settings: ["max_delivery_attempts", "durations.reattempt"],
  },
  {
    from: "Available for Pickup",
    to: "(picked up)",
    when: "the patient collects it: `hardware.delivered`, billing starts once device and gateway are both with the patient (see Billing); no webhook, the status stays",
    settings: ["durations.pickup"],
  },
  {
    from: "any, until delivered or collected",
    to: "Unlinked",
    when: "its device is unlinked (unlink-gateway): the order stops where it is, listed as Unlinked like its device (spec 3); a replacement fires its Unlinked special-order webhook, a request's last is its device's Unlinked one; no further transitions or webhooks; not Cancelled: the order is not removed",
    settings: [],
    note: "at once",
  },
  {
    from: "Client Action Required, On Hold, Ready to Ship",
    to: "Cancelled",
    when: "the lab admin cancels it: the order is removed, the webhook is its only record (spec 3)",
    settings: [],
    note: "admin",
  },
];
