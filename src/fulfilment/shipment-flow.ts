import type { FulfilmentStatus } from "./statuses.ts";

/**
 * The shipment state machine as a graph (spec 3 "Transitions shown", with the carrier's steps
 * the spec names but does not order: rpmlab's order, README "Fulfilment"). The simulator only
 * ever moves a shipment along these edges; so do the admin's advance and injected carrier
 * events, which is what makes an impossible move a 400 rather than a corrupt timeline.
 */

/**
 * Not a fulfilment status: the patient collected a package held for pickup. Spec 6.2: Delivered
 * does not fire for a carrier-held package, so this step sends no webhook and leaves the status
 * at Available for Pickup; it only tells the lab the hardware is with the patient.
 */
export const PICKED_UP = "Picked Up";

/** What a shipment's next transition can be. */
export type ShipmentStep = FulfilmentStatus | typeof PICKED_UP;

/** Spec 3: a pending order, not shipped yet; only these can be Cancelled. */
export const PENDING: readonly FulfilmentStatus[] = [
  "Client Action Required",
  "On Hold",
  "Ready to Ship",
];

/** Statuses after which nothing moves (the order is closed). */
export const FINAL: readonly FulfilmentStatus[] = ["Delivered", "Cancelled"];

const EDGES: Readonly<Partial<Record<FulfilmentStatus, readonly FulfilmentStatus[]>>> = {
  // Only the client moves a request out of Client Action Required (by fixing the address, spec
  // 3); the vendor may cancel it (duplicate clean-up).
  "Client Action Required": ["Cancelled"],
  "On Hold": ["Ready to Ship", "Cancelled"],
  "Ready to Ship": ["Dropshipped", "On Hold", "Cancelled"],
  Dropshipped: ["In Transit", "Delivery Issue", "Available for Pickup"],
  // In Transit → In Transit: another carrier scan (spec 3: several events per shipment).
  "In Transit": ["In Transit", "Out for Delivery", "Delivery Issue", "Available for Pickup"],
  "Out for Delivery": ["Delivered", "Delivery Issue", "Available for Pickup"],
  "Delivery Issue": ["Out for Delivery", "In Transit", "Available for Pickup"],
};

/** The statuses a shipment in `from` can move to in one transition. */
export function nextStatuses(from: string): readonly FulfilmentStatus[] {
  return EDGES[from as FulfilmentStatus] ?? [];
}

export function canMove(from: string, to: string): boolean {
  return nextStatuses(from).includes(to as FulfilmentStatus);
}

/**
 * The statuses a shipment goes through from `from` to reach `to`, `to` included: the shortest
 * path along the edges (so Ready to Ship → Delivered passes Dropshipped, In Transit and Out for
 * Delivery, each firing its webhook). A self-edge (In Transit → In Transit) is one scan. Null
 * when `to` cannot be reached.
 */
export function pathTo(from: string, to: string): FulfilmentStatus[] | null {
  if (from === to) return canMove(from, to) ? [to as FulfilmentStatus] : null;
  const previous = new Map<string, string>([[from, from]]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const next of nextStatuses(at)) {
      // Cancelled ends a pending order; it is never a stop on the way elsewhere.
      if (previous.has(next) || (next === "Cancelled" && to !== "Cancelled")) continue;
      previous.set(next, at);
      if (next === to) {
        const path: FulfilmentStatus[] = [];
        for (let s: string = to; s !== from; s = previous.get(s)!) {
          path.unshift(s as FulfilmentStatus);
        }
        return path;
      }
      queue.push(next);
    }
  }
  return null;
}

/** Carrier events the lab admin can inject (a scan, a failed attempt, …), and what each does. */
export const CARRIER_EVENTS = {
  scan: "In Transit",
  out_for_delivery: "Out for Delivery",
  delivery_issue: "Delivery Issue",
  held_at_facility: "Available for Pickup",
  delivered: "Delivered",
  picked_up: PICKED_UP,
} as const satisfies Record<string, ShipmentStep>;
export type CarrierEvent = keyof typeof CARRIER_EVENTS;
export const CARRIER_EVENT_NAMES = Object.keys(CARRIER_EVENTS) as CarrierEvent[];

/** `In Transit`, `IN_TRANSIT`, ` in-transit ` → `in_transit`. */
const spelling = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, "_");

/**
 * The carrier event a name means: its own name, or the status it fires as the fulfilment
 * webhook spells it (spec 3: In Transit, Available for Pickup…), in any case, spaces or
 * underscores — an admin copies what the webhook showed.
 */
export function carrierEventNamed(name: string): CarrierEvent | undefined {
  const wanted = spelling(name);
  return CARRIER_EVENT_NAMES.find((e) => e === wanted || spelling(CARRIER_EVENTS[e]) === wanted);
}

/** The names the 400 of an unknown event lists. */
export const CARRIER_EVENT_CHOICES = `${CARRIER_EVENT_NAMES.join(", ")}, or the status each fires: ${Object.values(CARRIER_EVENTS).join(", ")}`;

/** Whether a shipment in `status` (picked up already or not) can take this carrier event. */
export function carrierEventApplies(
  event: CarrierEvent,
  status: string,
  pickedUp: boolean,
): boolean {
  const step = CARRIER_EVENTS[event];
  if (step === PICKED_UP) return status === "Available for Pickup" && !pickedUp;
  return canMove(status, step);
}
