import { toIsoMicros } from "../../core/time.ts";
import type { ReplacementStatusEvent } from "../../fulfilment/events.ts";

/**
 * The special-order webhook of a replacement order (spec 6.1: special orders include
 * replacement orders; 6.2: they carry created_on, updated_on, shipped_on and delivered_on; the
 * rest is "not shown", so rpmlab's): the order as hwi-replacements/{id}/ lists it, its kind, the
 * device's patient_id, the four times and the tracking link — the same values the order's read
 * (hwi-replacements/) shows: shipped_on from Dropshipped on, delivered_on once delivered.
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
  readonly tracking_link: string | null;
}

export function specialOrderWebhookBody(
  event: ReplacementStatusEvent,
  patientId: string | null,
): SpecialOrderWebhookBody {
  const r = event.replacement;
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
    shipped_on: r.shippedOn === null ? null : toIsoMicros(r.shippedOn),
    delivered_on: r.deliveredOn === null ? null : toIsoMicros(r.deliveredOn),
    tracking_link: r.trackingLink,
  };
}
