import { z } from "zod";
import { charField, drfObject, optionalText } from "../../core/drf-fields.ts";
import { toIsoMicros } from "../../core/time.ts";
import type { HardwareLogRecord } from "../../fulfilment/hardware-logs.ts";
import type { ReplacementRecord } from "../../fulfilment/replacements.ts";
import { documentedBody, iso, toJsonSchema } from "../json-schema.ts";
import { listSchemas } from "../pagination.ts";

/**
 * hwi-replacements and hwi-hardware-uuid-logs records (spec 2.7: "fields … not shown"; rpmlab's
 * choice, wire-formats "Replacements" for the request fields).
 */

const text = () => z.string().nullable();

export const ReplacementOut = z.object({
  id: z.string(),
  hwi_device_id: z.string(),
  device_types: z.array(z.object({ name: z.string() })),
  shipping_name: text(),
  shipping_address: text(),
  shipping_city: text(),
  shipping_state: text(),
  shipping_zip_code: text(),
  notify_emails: text(),
  status: text().describe(
    "The shipment's status: Ready to Ship (or On Hold) when requested, then Dropshipped, In Transit, Out for Delivery, Delivered (or Delivery Issue, Available for Pickup).",
  ),
  previous_hardware_uuid: text().describe("The device's hardware_uuid when requested."),
  new_hardware_uuid: text().describe("The replacement gateway id or IMEI, once shipped."),
  created: iso(),
  modified: iso(),
  created_on: iso().describe(
    "Spec 6.2 special-order dates: created_on, updated_on, shipped_on, delivered_on.",
  ),
  updated_on: iso(),
  shipped_on: iso().nullable().describe("When it was Dropshipped."),
  delivered_on: iso().nullable().describe("When it reached the patient (Delivered or collected)."),
  tracking_link: text().describe("The carrier's tracking link, once shipped."),
});

export const REPLACEMENT_JSON_SCHEMA = toJsonSchema(ReplacementOut);
export const REPLACEMENT_LISTS = listSchemas(REPLACEMENT_JSON_SCHEMA);

export function replacementJson(r: ReplacementRecord): z.output<typeof ReplacementOut> {
  return {
    ...r,
    device_types: r.device_types.map((t) => ({ name: t.name })),
    created: toIsoMicros(r.created),
    modified: toIsoMicros(r.modified),
    created_on: toIsoMicros(r.created_on),
    updated_on: toIsoMicros(r.updated_on),
    shipped_on: r.shipped_on === null ? null : toIsoMicros(r.shipped_on),
    delivered_on: r.delivered_on === null ? null : toIsoMicros(r.delivered_on),
  };
}

const shipping = (what: string) =>
  optionalText(`${what}. All five shipping fields, or none (bulk inventory).`);

/** Documentation of the POST body; src/fulfilment/replacements.ts validates it. */
export const REPLACEMENT_BODY = documentedBody(
  drfObject({
    hwi_device_id: charField().describe("The device to replace (its record is kept)."),
    device_types: z
      .array(drfObject({ name: charField() }))
      .min(1)
      .describe('"Gateway" and/or the device\'s own type name (current or legacy).'),
    shipping_name: shipping("Recipient"),
    shipping_address: shipping("Street address"),
    shipping_city: shipping("City"),
    shipping_state: shipping("State"),
    shipping_zip_code: shipping("ZIP code"),
    notify_emails: optionalText("Addresses to notify, comma separated."),
  }),
  'A replacement order (wire-formats "Replacements").',
);

export const HardwareLogOut = z.object({
  id: z.number().int(),
  hwi_device_id: z.string(),
  previous_hardware_uuid: text(),
  hardware_uuid: text(),
  reason: z
    .enum(["activation", "update", "replacement", "unlink", "shipment"])
    .describe("What changed the hardware_uuid."),
  created: iso(),
});

export const HARDWARE_LOG_LISTS = listSchemas(toJsonSchema(HardwareLogOut));

export function hardwareLogJson(r: HardwareLogRecord): z.output<typeof HardwareLogOut> {
  return { ...r, created: toIsoMicros(r.created) };
}
