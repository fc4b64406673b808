import type { DeviceRow, Ms, PatientRow } from "../store/types.ts";
import type { ReplacementRow, WhitelistRow } from "../store/types-hardware.ts";
import type { FulfilmentStatus } from "./statuses.ts";

/**
 * What the device services announce. Nothing is sent from here: the webhook outbox takes
 * `fulfilment.status`, `replacement.status` and `patient.written` (atomically()), the gateway
 * simulator listens to `whitelist.changed`.
 * Every event is emitted after its transaction committed, so no listener ever sees a change that
 * was rolled back.
 */

/** Spec 6.2 fulfilment webhook, before rendering (fulfilmentWebhookBody). */
export interface FulfilmentStatusEvent {
  readonly accountId: string;
  /** The device after the change. */
  readonly device: DeviceRow;
  /** Spec 6.2 patient_id: the patient's external_id, or null for a device without patient. */
  readonly patientExternalId: string | null;
  readonly status: FulfilmentStatus;
  /** Spec 6.2: the hardware uuid before the change; the webhook's device_id for Replaced and Unlinked. */
  readonly previousHardwareUuid: string | null;
  /** Why Client Action Required fired (rpmlab's addition, for logs and the dashboard); else null. */
  readonly reason: string | null;
  readonly trackingLink: string | null;
  readonly at: Ms;
}

/** A special-order webhook of a replacement (spec 6.1: replacement orders). */
export interface ReplacementStatusEvent {
  readonly accountId: string;
  readonly replacement: ReplacementRow;
  readonly status: string;
  readonly at: Ms;
}

/** A device took up its hardware: at activation on a known gateway or IMEI, or on adoption. */
export interface DeviceActivatedEvent {
  readonly accountId: string;
  readonly device: DeviceRow;
  readonly patientExternalId: string | null;
  /** False while the gateway is unknown (status Unknown Gateway ID). */
  readonly gatewayKnown: boolean;
  /** Orphan readings kept for its gateway slot or IMEI that were attached to it. */
  readonly orphansAttached: number;
  readonly at: Ms;
}

/** Spec 2.3: what a gateway must now accept (status RE) or forget (downlink "whitelist"). */
export interface WhitelistChangedEvent {
  readonly gatewayUuid: string;
  readonly added: readonly WhitelistRow[];
  /** MAC addresses removed. */
  readonly removed: readonly string[];
  readonly at: Ms;
}

/**
 * Issue 4 §2: a shipment's next transition changed (or it has none any more). Internal: the
 * fulfilment simulator listens to arm its timer; nothing is sent to clients.
 */
export interface ShipmentScheduledEvent {
  readonly shipmentId: string;
  /** The shipment's step once the change committed: a timer fires only if it still holds. */
  readonly step: number;
  readonly nextStatus: string | null;
  readonly nextAt: Ms | null;
}

/**
 * Issue 4 §2: the hardware of an order is with the patient (Delivered, or collected from the
 * carrier's facility). Scenarios use it to power the gateway and devices on. Not a webhook.
 */
export interface HardwareDeliveredEvent {
  readonly accountId: string;
  /** The order: an hwi_device_id (device request) or a replacement id. */
  readonly orderId: string;
  readonly kind: "device" | "replacement";
  readonly via: "doorstep" | "pickup";
  readonly patientExternalId: string | null;
  /**
   * The gateway the order's device is on now (the one in the box, or the patient's gateway it
   * joined); null for IMEIs, and while that gateway is still in another box (in the mail, held
   * at a facility): it comes then.
   */
  readonly gatewayUuid: string | null;
  /**
   * The devices with the patient now that may power on, after the change: the box's own device
   * (a ship_gateway_only request's too, which the patient has, once its gateway is here); a box
   * with a gateway adds the devices on it that are with the patient: those that joined it and
   * were waiting for it, or a replacement gateway's. A device whose own box is still in the
   * mail is not named: its own delivery names it.
   */
  readonly devices: readonly DeviceRow[];
  /**
   * Devices of `devices` whose own unit the box brings anew (a replacement naming the device's
   * type, spec 4.3): the unit the patient had goes back to the vendor and powers off now.
   */
  readonly replacedUnits: readonly string[];
  /** Who signed for it (require_signature), else null. */
  readonly signedBy: string | null;
  readonly at: Ms;
}

/**
 * A patient a device service wrote (spec 6.1 patient webhooks): created by an activation's nested
 * patient (spec 2.1), or its fields updated through a device (PUT hwi-devices, spec 4.3).
 */
export interface PatientWrittenEvent {
  readonly action: "created" | "updated";
  /** The record after the write. */
  readonly patient: PatientRow;
}

/**
 * An ASR supply order was placed, shipped or delivered (spec 4.5); its special-order webhook is
 * in the outbox already. `nextAt`: when its next step is due (null once delivered), for the
 * supply shipping simulator to arm.
 */
export interface SupplyStatusEvent {
  readonly accountId: string;
  readonly requestId: string;
  readonly status: "pending" | "fulfilled";
  readonly nextAt: Ms | null;
}

/** A type, not an interface, so it satisfies TypedEvents' EventMap (an index signature). */
export type FulfilmentEvents = {
  "fulfilment.status": FulfilmentStatusEvent;
  "replacement.status": ReplacementStatusEvent;
  "device.activated": DeviceActivatedEvent;
  "whitelist.changed": WhitelistChangedEvent;
  "shipment.scheduled": ShipmentScheduledEvent;
  "hardware.delivered": HardwareDeliveredEvent;
  "patient.written": PatientWrittenEvent;
  "supply.status": SupplyStatusEvent;
};

/** What the services need of an emitter: a TypedEvents<FulfilmentEvents> (src/core/events.ts). */
export interface FulfilmentEventSink {
  emit<K extends keyof FulfilmentEvents & string>(name: K, payload: FulfilmentEvents[K]): void;
}

/** One gathered event: its name and payload. */
export type PendingEvent = {
  [K in keyof FulfilmentEvents & string]: {
    readonly name: K;
    readonly payload: FulfilmentEvents[K];
  };
}[keyof FulfilmentEvents & string];

/** Events gathered inside a transaction, emitted once it committed. */
export class PendingEvents {
  private readonly items: PendingEvent[] = [];

  constructor(private readonly sink: FulfilmentEventSink) {}

  add<K extends keyof FulfilmentEvents & string>(name: K, payload: FulfilmentEvents[K]): void {
    this.items.push({ name, payload } as PendingEvent);
  }

  /** What was gathered so far, in order (atomically() writes the webhook events to the outbox). */
  get gathered(): readonly PendingEvent[] {
    return this.items;
  }

  flush(): void {
    for (const { name, payload } of this.items.splice(0)) {
      this.sink.emit(name, payload as never);
    }
  }
}

/** wire-formats "Fulfilment webhook": the body the dispatcher posts for an event. */
export interface FulfilmentWebhookBody {
  readonly hwi_device_id: string;
  readonly patient_id: string | null;
  readonly hardware_uuid: string | null;
  readonly sensor_code: string | null;
  readonly device_name: string;
  readonly status: FulfilmentStatus;
  readonly tracking_link: string | null;
  readonly device_id: string | null;
}

export function fulfilmentWebhookBody(event: FulfilmentStatusEvent): FulfilmentWebhookBody {
  const carriesPrior = event.status === "Replaced" || event.status === "Unlinked";
  return {
    hwi_device_id: event.device.id,
    patient_id: event.patientExternalId,
    hardware_uuid: event.device.hardwareUuid,
    sensor_code: event.device.sensorCode,
    device_name: event.device.name,
    status: event.status,
    tracking_link: event.trackingLink,
    // Spec 6.2: the prior hardware uuid in Replaced and Unlinked webhooks; null otherwise, as in
    // the wire-formats sample.
    device_id: carriesPrior ? event.previousHardwareUuid : null,
  };
}
