import { SHIPPED_STATUSES } from "../store/types.ts";

/** Spec 3: the fulfilment statuses a fulfilment webhook carries, and nothing else. */
export const FULFILMENT_STATUSES = [
  "Client Action Required",
  "On Hold",
  "Ready to Ship",
  "Dropshipped",
  "In Transit",
  "Out for Delivery",
  "Delivery Issue",
  "Available for Pickup",
  "Delivered",
  "Replaced",
  "Unlinked",
  "Cancelled",
] as const;
export type FulfilmentStatus = (typeof FULFILMENT_STATUSES)[number];

export function isFulfilmentStatus(status: string): status is FulfilmentStatus {
  return (FULFILMENT_STATUSES as readonly string[]).includes(status);
}

/**
 * Device statuses beyond the fulfilment ones (spec 3: "full set of device status values: not
 * shown"). Active is rpmlab's choice for a device activated on hardware already in hand; Unknown
 * Gateway ID is the real service's (wire-formats "Devices").
 */
export const ACTIVE = "Active";
export const UNKNOWN_GATEWAY = "Unknown Gateway ID";

/**
 * A fulfilment request not yet shipped. A second request for the same patient and device type
 * while one of these is open is a "duplicate submission" (spec 3: Client Action Required).
 */
export const PENDING_STATUSES: readonly FulfilmentStatus[] = [
  "Client Action Required",
  "On Hold",
  "Ready to Ship",
];

/**
 * A shipped request the carrier still has on its way to the patient (spec 3's scan events).
 * Not Available for Pickup: that package is held at a facility and may never be collected.
 */
export const ON_THE_WAY_STATUSES: readonly FulfilmentStatus[] = [
  "Dropshipped",
  "In Transit",
  "Out for Delivery",
  "Delivery Issue",
];

/** Spec 3 / 6.2: the list filter status=shipped (not Available for Pickup). */
export const SHIPPED_FILTER: readonly string[] = SHIPPED_STATUSES;
