import type { Ms } from "./types.ts";

/**
 * Row types of the ASR module (migration 0006; spec 2.7, 3, 4.5).
 */

/** Spec 3: a supply request is pending (can be deleted) or fulfilled (shipped). */
export type SupplyRequestStatus = "pending" | "fulfilled";

/** Who placed the order: the client's POST, or the account's automatic reorder (spec 1.4). */
export type SupplyOrigin = "client" | "auto_reorder";

export interface SupplyRequestRow {
  readonly id: string;
  readonly accountId: string;
  readonly supplyTypeId: string;
  readonly supplyName: string;
  readonly gatewayId: string | null;
  readonly imei: string | null;
  /** The gateway id or IMEI the order is for, as the device records spell it. */
  readonly hardwareUuid: string | null;
  readonly relatedDeviceId: string | null;
  /** The device the supply is for: the related device, or the one on the hardware it fits. */
  readonly forDeviceId: string | null;
  readonly patientExternalId: string | null;
  readonly shippingName: string;
  readonly shippingAddress: string;
  readonly shippingCity: string;
  readonly shippingState: string;
  readonly shippingZipCode: string;
  readonly notifyEmails: string | null;
  readonly origin: SupplyOrigin;
  /** Test strips in the box (strip supplies), else null. */
  readonly strips: number | null;
  readonly upFrontCost: string;
  readonly shippingCost: string;
  readonly status: SupplyRequestStatus;
  /** Transitions applied so far: a timer and an admin action never both apply one. */
  readonly step: number;
  /** When the next step (ship, deliver) is due; null once delivered. */
  readonly nextAt: Ms | null;
  readonly carrier: string | null;
  readonly trackingNumber: string | null;
  readonly trackingLink: string | null;
  readonly created: Ms;
  readonly modified: Ms;
  readonly shippedOn: Ms | null;
  readonly deliveredOn: Ms | null;
}

export type NewSupplyRequest = Omit<
  SupplyRequestRow,
  | "id"
  | "accountId"
  | "status"
  | "step"
  | "nextAt"
  | "carrier"
  | "trackingNumber"
  | "trackingLink"
  | "created"
  | "modified"
  | "shippedOn"
  | "deliveredOn"
> & {
  /** When its first step is due, drawn from the id the store gives it. */
  readonly nextAt: (id: string) => Ms | null;
};

export type SupplyRequestPatch = Partial<
  Pick<
    SupplyRequestRow,
    | "status"
    | "nextAt"
    | "carrier"
    | "trackingNumber"
    | "trackingLink"
    | "shippedOn"
    | "deliveredOn"
    /** When the step happened; the store's clock when absent. */
    | "modified"
  >
>;

export interface SupplyRequestFilter {
  /** true: shipped orders only (spec 4.5 `fulfilled`); false: pending only. */
  readonly fulfilled?: boolean;
  /** Text search across the order's fields (spec 4.5 `search`), case-insensitive. */
  readonly search?: string;
  /**
   * Supply types whose own fields hold the search text: their orders match too (the supply
   * catalogue is a file, not a table).
   */
  readonly searchSupplyTypeIds?: readonly string[];
  /** Orders for this device (SupplyRequestRow.forDeviceId). */
  readonly forDeviceId?: string;
  readonly origin?: SupplyOrigin;
  /** Orders not delivered yet (pending, or shipped and on their way). */
  readonly undelivered?: boolean;
}

/** Glucose readings of a glucometer's hardware, for the strip estimate (spec 2.7). */
export interface StripUsage {
  /** Glucose measurements stored in all. */
  readonly used: number;
  /** Those at or after the `recentSince` asked for. */
  readonly recent: number;
  /** Time of the first one, null when none. */
  readonly first: Ms | null;
}

/** An account's automatic reorder (spec 1.4): either threshold, or both, places an order. */
export interface AutoReorderSettings {
  /** Fewer estimated strips than this. */
  readonly stripsBelow: number | null;
  /** Fewer days of strips than this at the recent daily use. */
  readonly daysBelow: number | null;
  /** The supply type ordered. */
  readonly supplyName: string;
}
