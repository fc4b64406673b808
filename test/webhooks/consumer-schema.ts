/**
 * A strict consumer of rpmlab's webhooks, written from wire-formats.md (and, for the kinds it
 * leaves "not shown", from the README's webhook section), not from rpmlab's code: what a real
 * integration's validation would accept. Types and required fields as documented: value_1,
 * value_2 and sensor_code strings (sensor_code null only for direct-cellular devices), integer
 * timezone_offset, filter_params an object or null, ISO times with microseconds and Z, no field
 * that the documents do not name, and no array body unless the webhook posts arrays.
 */
import { z } from "zod";
import { DEVICE_TYPES, LEGACY_NAMES, type SpecDeviceType } from "../catalogue/spec-2-8.ts";

const iso = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
const twoDecimals = z.string().regex(/^-?\d+\.\d{2}$/);
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

/** Spec 3, the fulfilment statuses, as the spec writes them. */
const STATUSES = [
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

/** Spec 2.8's device type of a device_name (2.4's legacy name too), undefined when unknown. */
function specTypeOf(deviceName: string): SpecDeviceType | undefined {
  const name = LEGACY_NAMES[deviceName] ?? deviceName;
  return DEVICE_TYPES.find((t) => t.profiles.includes(name));
}

/** Spec 2.8: a known device type, whose sensor code the body carries (null: direct-cellular). */
function matchesCatalogue(
  body: { device_name: string; sensor_code: string | null },
  ctx: z.RefinementCtx,
): SpecDeviceType | undefined {
  const type = specTypeOf(body.device_name);
  if (type === undefined) {
    ctx.addIssue({ code: "custom", message: `unknown device_name ${body.device_name}` });
  } else if (body.sensor_code !== type.sensorCode) {
    ctx.addIssue({
      code: "custom",
      message: `sensor_code ${body.sensor_code} is not ${type.sensorCode} of ${body.device_name}`,
    });
  }
  return type;
}

/** Spec 2.8: the device's metric, "0.00" for a value 2 it has none of, its filter_params keys. */
function matchesMetric(
  r: { metric: string; value_2: string; filter_params: Record<string, unknown> | null },
  type: SpecDeviceType,
  ctx: z.RefinementCtx,
): void {
  const metric = type.metrics.find((m) => m.name === r.metric);
  if (metric === undefined) {
    ctx.addIssue({ code: "custom", message: `${type.type} sends no metric ${r.metric}` });
    return;
  }
  if (metric.value_2 === null && r.value_2 !== "0.00") {
    ctx.addIssue({ code: "custom", message: `${r.metric} has no value 2, got ${r.value_2}` });
  }
  const stray = Object.keys(r.filter_params ?? {}).filter((k) => !metric.params.includes(k));
  if (stray.length > 0) {
    ctx.addIssue({ code: "custom", message: `${r.metric} carries no filter_params ${stray}` });
  }
}

export const MeasurementRecord = z
  .strictObject({
    metric: z.string().min(1),
    device_name: z.string().min(1),
    hwi_device_id: uuid,
    patient_id: z.string().min(1).nullable(),
    // Spec 6.2: the current gateway or IMEI, null when unlinked.
    hardware_uuid: z.string().min(1).nullable(),
    sensor_code: z.string().regex(/^\d+$/).nullable(),
    value_1: twoDecimals,
    value_2: twoDecimals,
    created: iso,
    timestamp: iso,
    timezone_offset: z.number().int(),
    estimated_timestamp: z.boolean(),
    // wire-formats: "an object, or null when a reading has none" — never an empty object.
    filter_params: z
      .record(z.string(), z.unknown())
      .refine((params) => Object.keys(params).length > 0, "no params is null, not {}")
      .nullable(),
  })
  // wire-formats: in the measurement webhook `created` repeats `timestamp`.
  .refine((r) => r.created === r.timestamp, { message: "created must equal timestamp" })
  .superRefine((r, ctx) => {
    const type = matchesCatalogue(r, ctx);
    if (type !== undefined) matchesMetric(r, type, ctx);
  });

/** Spec 6.2: device_id holds the prior hardware UUID in Replaced and Unlinked webhooks. */
const CARRIES_PRIOR_HARDWARE = new Set(["Replaced", "Unlinked"]);

export const FulfilmentBody = z
  .strictObject({
    hwi_device_id: uuid,
    patient_id: z.string().min(1).nullable(),
    hardware_uuid: z.string().min(1).nullable(),
    sensor_code: z.string().regex(/^\d+$/).nullable(),
    device_name: z.string().min(1),
    status: z.enum(STATUSES),
    tracking_link: z.string().url().nullable(),
    device_id: z.string().min(1).nullable(),
  })
  .superRefine((b, ctx) => {
    matchesCatalogue(b, ctx);
    // README "Payloads": the prior hardware in Replaced and Unlinked (spec 6.2), null otherwise
    // (an unlinked order that never got hardware has none to name).
    const prior = CARRIES_PRIOR_HARDWARE.has(b.status);
    if ((b.device_id !== null && !prior) || (b.device_id === null && b.status === "Replaced")) {
      ctx.addIssue({ code: "custom", message: `device_id ${b.device_id} on ${b.status}` });
    }
    // Spec 3: on unlink hardware_uuid becomes null; a replacement names the new gateway.
    const replacedWell =
      b.status !== "Replaced" || (b.hardware_uuid !== null && b.hardware_uuid !== b.device_id);
    if ((b.status === "Unlinked" && b.hardware_uuid !== null) || !replacedWell) {
      ctx.addIssue({ code: "custom", message: `hardware_uuid ${b.hardware_uuid} on ${b.status}` });
    }
  });

const ReplacementOrderBody = z.strictObject({
  id: uuid,
  order_type: z.literal("replacement"),
  // README "Payloads": a replacement order moves through the fulfilment statuses of spec 3.
  status: z.enum(STATUSES),
  hwi_device_id: uuid,
  patient_id: z.string().nullable(),
  device_types: z.array(z.strictObject({ name: z.string().min(1) })).min(1),
  previous_hardware_uuid: z.string().nullable(),
  new_hardware_uuid: z.string().nullable(),
  shipping_name: z.string().nullable(),
  shipping_address: z.string().nullable(),
  shipping_city: z.string().nullable(),
  shipping_state: z.string().nullable(),
  shipping_zip_code: z.string().nullable(),
  notify_emails: z.string().nullable(),
  created_on: iso,
  updated_on: iso,
  shipped_on: iso.nullable(),
  delivered_on: iso.nullable(),
  tracking_link: z.string().url().nullable(),
});

const decimal = z.string().regex(/^\d+\.\d{2}$/);

/** README "Supply requests": the order as asr/supply-requests/ returns it. */
const SupplyOrderBody = z.strictObject({
  id: uuid,
  order_type: z.literal("supply"),
  supply_name: z.string().min(1),
  supply_type: z
    .strictObject({
      id: uuid,
      name: z.string().min(1),
      description: z.string(),
      image: z.string().url(),
      up_front_cost: decimal,
      shipping_cost: decimal,
      hardware_uuid_required: z.boolean(),
      deprecated: z.boolean(),
    })
    .nullable(),
  status: z.enum(["pending", "fulfilled"]),
  auto_reorder: z.boolean(),
  gateway_id: z.string(),
  imei: z.string(),
  related_client_device_id: uuid.nullable(),
  patient_id: z.string().min(1).nullable(),
  shipping_name: z.string().min(1),
  shipping_address: z.string().min(1),
  shipping_city: z.string().min(1),
  shipping_state: z.string().min(1),
  shipping_zip_code: z.string().min(1),
  notify_emails: z.string(),
  strips: z.number().int().positive().nullable(),
  up_front_cost: decimal,
  shipping_cost: decimal,
  carrier: z.enum(["ups", "fedex", "usps"]).nullable(),
  tracking_number: z.string().min(1).nullable(),
  tracking_link: z.string().url().nullable(),
  created_on: iso,
  updated_on: iso,
  shipped_on: iso.nullable(),
  delivered_on: iso.nullable(),
});

/** Spec 6.1: special orders include replacement and supply orders. */
export const SpecialOrderBody = z
  .discriminatedUnion("order_type", [ReplacementOrderBody, SupplyOrderBody])
  .superRefine((o, ctx) => {
    // Spec 6.2's four times: delivered after shipped, updated at or after created.
    if (o.delivered_on !== null && (o.shipped_on === null || o.delivered_on < o.shipped_on)) {
      ctx.addIssue({ code: "custom", message: `delivered_on ${o.delivered_on} before shipping` });
    }
    if (o.updated_on < o.created_on) {
      ctx.addIssue({ code: "custom", message: "updated_on before created_on" });
    }
    if (o.order_type !== "supply") return;
    // Spec 3: fulfilled means shipped; 2.7: imei is empty when a gateway id is used.
    if ((o.status === "fulfilled") !== (o.shipped_on !== null)) {
      ctx.addIssue({ code: "custom", message: `status ${o.status}, shipped_on ${o.shipped_on}` });
    }
    if (o.gateway_id !== "" && o.imei !== "") {
      ctx.addIssue({ code: "custom", message: "both gateway_id and imei" });
    }
  });

const text = z.string().nullable();
export const PatientBody = z
  .strictObject({
    action: z.enum(["created", "updated", "deleted"]),
    patient_id: z.string().min(1),
    previous_patient_id: z.string().min(1).nullable(),
    timestamp: iso,
    patient: z.strictObject({
      external_id: z.string().min(1),
      name: text,
      address: text,
      city: text,
      state: text,
      zip_code: text,
      phone_number: text,
      email: text,
      physician: text,
      clinic_name: text,
      care_manager: text,
      sms_opt_in: z.boolean(),
      confirm_address: z.boolean(),
      address_status: z.enum(["Verified", "Invalid"]).nullable(),
      address_verified_by: text,
    }),
  })
  .refine((b) => b.patient.external_id === b.patient_id, {
    message: "patient_id must be the patient's external_id (spec 6.2)",
  });

export type MeasurementRecordBody = z.output<typeof MeasurementRecord>;

/** The schema a consumer applies to a POST of a webhook of this kind and array setting. */
export function consumerSchema(event: string, postAsArray: boolean): z.ZodType {
  switch (event) {
    case "MEASUREMENT":
      return postAsArray ? z.array(MeasurementRecord).min(1) : MeasurementRecord;
    case "FULFILLMENT":
      return FulfilmentBody;
    case "SPECIAL_ORDER":
      return SpecialOrderBody;
    case "PATIENT":
      return PatientBody;
    default:
      throw new Error(`no consumer for event ${event}`);
  }
}
