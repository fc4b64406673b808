import { toIsoMicros } from "../../core/time.ts";
import type { ReplacementStatusEvent } from "../../fulfilment/events.ts";

/** Spec 3: the fulfilment statuses that mean the order left the warehouse. */
const SHIPPING = new Set(["Dropshipped", "In Transit", "Out for Delivery"]);
const DELIVERED = new Set(["Delivered", "Available for Pickup"]);

/**
 * The special-order webhook of a replacement order (spec 6.1: special orders include
 * replacement orders; 6.2: they carry created_on, updated_on, shipped_on and delivered_on; the
 * rest is "not shown", so rpmlab's): the order as hwi-replacements/{id}/ lists it, its kind, the
 * device's patient_id, and the four times. shipped_on and delivered_on are the time of the event
 * that shipped or delivered it, null on the others.
 */
export interface SpecialOrderWebhookBody {
  readonly id: string;
  readonly order_type: "replacement";
  readonly status: string;
  readonly hwi_device_id: string;
  readonly patient_id: string | null;
  readonly device_types: ReadonlyArray<{ readonly name: string }>;
  readonly previous_hardware_uuid: string | null;
  readonly new_hardware_uuid: string | null;
  readonly shipping_name: string | null;
  readonly shipping_address: string | null;
  readonly shipping_city: string | null;
  readonly shipping_state: string | null;
  readonly shipping_zip_code: string | null;
  readonly notify_emails: string | null;
  readonly created_on: string;
  readonly updated_on: string;
  readonly shipped_on: string | null;
  readonly delivered_on: string | null;
}

export function specialOrderWebhookBody(
  event: ReplacementStatusEvent,
  patientId: string | null,
): SpecialOrderWebhookBody {
  const r = event.replacement;
  const at = toIsoMicros(event.at);
  return {
    id: r.id,
    order_type: "replacement",
    status: event.status,
    hwi_device_id: r.deviceId,
    patient_id: patientId,
    device_types: r.deviceTypes.map((name) => ({ name })),
    previous_hardware_uuid: r.previousHardwareUuid,
    new_hardware_uuid: r.newHardwareUuid,
    shipping_name: r.shippingName,
    shipping_address: r.shippingAddress,
    shipping_city: r.shippingCity,
    shipping_state: r.shippingState,
    shipping_zip_code: r.shippingZipCode,
    notify_emails: r.notifyEmails,
    created_on: toIsoMicros(r.created),
    updated_on: toIsoMicros(r.modified),
    shipped_on: SHIPPING.has(event.status) ? at : null,
    delivered_on: DELIVERED.has(event.status) ? at : null,
  };
}
