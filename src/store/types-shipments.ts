import type { Ms } from "./types.ts";

/**
 * Row types of the fulfilment simulator's tables (migration 0004): shipments with their
 * scheduled next transition, their carrier history, and billable periods of devices.
 */

/** What an order is: a device's fulfilment request (spec 4.3) or a replacement order. */
export type ShipmentKind = "device" | "replacement";

/** How the hardware reached the patient. */
export type DeliveredVia = "doorstep" | "pickup";

/**
 * One order on its way to a patient. Its id is the order's own: the hwi_device_id of a device
 * request, the replacement's id of a replacement order.
 */
export interface ShipmentRow {
  readonly id: string;
  readonly accountId: string;
  readonly kind: ShipmentKind;
  /** The device the order is for (a replacement's device too). */
  readonly deviceId: string;
  readonly replacementId: string | null;
  /** The current fulfilment status (spec 3). */
  readonly status: string;
  /** Why Client Action Required holds it, else null. */
  readonly reason: string | null;
  readonly requireSignature: boolean;
  readonly shipGatewayOnly: boolean;
  /** Spec 2.4: a deprecated delivery type, when one was sent. */
  readonly deliveryType: string | null;
  /** What is in the box; null until it ships (decided at Dropshipped). */
  readonly shipsDevice: boolean | null;
  readonly shipsGateway: boolean | null;
  /** The gateway id or IMEI shipped (or reused), once Dropshipped. */
  readonly hardwareUuid: string | null;
  readonly carrier: string | null;
  readonly trackingNumber: string | null;
  readonly trackingLink: string | null;
  /** Transitions applied so far: each one forks the shipment's Rng anew. */
  readonly step: number;
  readonly scansPlanned: number;
  readonly scansDone: number;
  /** Planned time from the first carrier scan to Out for Delivery. */
  readonly transitMs: number;
  /** Delivery attempts (Out for Delivery) so far. */
  readonly attempts: number;
  /** The scheduled next transition; null when none (terminal, or waiting for the client). */
  readonly nextStatus: string | null;
  readonly nextAt: Ms | null;
  readonly expectedDelivery: Ms | null;
  readonly shippedOn: Ms | null;
  readonly deliveredOn: Ms | null;
  readonly deliveredVia: DeliveredVia | null;
  /** Who signed for it (require_signature), else null. */
  readonly signedBy: string | null;
  /** Why the simulator stopped moving it before the end (e.g. "unlinked"), else null. */
  readonly halted: string | null;
  readonly created: Ms;
  readonly modified: Ms;
}

export interface NewShipment {
  readonly id: string;
  readonly kind: ShipmentKind;
  readonly deviceId: string;
  readonly replacementId?: string | null;
  readonly status: string;
  readonly reason?: string | null;
  readonly requireSignature?: boolean;
  readonly shipGatewayOnly?: boolean;
  readonly deliveryType?: string | null;
  readonly nextStatus?: string | null;
  readonly nextAt?: Ms | null;
}

/**
 * `modified` defaults to the store clock's now; a transition applied at its due time (caught up
 * after a restart) gives that time instead (README Fulfilment: a transition's time is when it
 * was due).
 */
export type ShipmentPatch = Partial<
  Omit<ShipmentRow, "id" | "accountId" | "kind" | "deviceId" | "replacementId" | "created">
>;

export interface ShipmentFilter {
  readonly accountId?: string;
  /** One status or a set. */
  readonly status?: string | readonly string[];
  readonly kind?: ShipmentKind;
}

/** One line of a shipment's carrier history ("carrier status details", spec 6.2). */
export interface ShipmentEventRow {
  readonly id: number;
  readonly shipmentId: string;
  /** The status entered, or "Picked Up". */
  readonly status: string;
  readonly at: Ms;
  readonly detail: string;
  readonly location: string | null;
}

export interface NewShipmentEvent {
  readonly status: string;
  readonly at: Ms;
  readonly detail: string;
  readonly location?: string | null;
}

/** Why a device started to bill. */
export type BillingBasis = "activation" | "delivery" | "pickup";

/** A time during which a device is billable (spec 4.2: until unlinked). */
export interface BillingPeriodRow {
  readonly id: number;
  readonly accountId: string;
  readonly deviceId: string;
  readonly started: Ms;
  /** Null while still billing. */
  readonly ended: Ms | null;
  readonly basis: BillingBasis;
}
