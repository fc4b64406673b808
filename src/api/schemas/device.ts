import { z } from "zod";
import { booleanField, charField, drfObject, optionalText } from "../../core/drf-fields.ts";
import { toIsoMicros } from "../../core/time.ts";
import type { DeviceRecord } from "../../fulfilment/device-view.ts";
import { documentedBody, iso, toJsonSchema } from "../json-schema.ts";

/** The device record of GET/POST/PUT hwi-devices (spec 2.4; wire-formats "Devices"). */

const text = () => z.string().nullable();

const FulfilmentRequestOut = z
  .object({
    delivery_type: z.enum(["Priority", "Shipping"]).nullable(),
    require_signature: z.boolean(),
    ship_gateway_only: z.boolean(),
    created: iso(),
    reason: text().describe("Why the request is in Client Action Required, else null."),
  })
  .nullable()
  .describe(
    "The fulfilment request that created the device (rpmlab's shape; spec: not shown); null when the hardware was in hand at activation.",
  );

const DevicePatientOut = z
  .object({
    external_id: z.string(),
    name: text(),
    phone_number: text(),
    email: text(),
    physician: text(),
    clinic_name: text(),
    care_manager: text(),
    sms_opt_in: z.boolean(),
  })
  .nullable()
  .describe("The nested patient (spec 2.1: the same record as hwi-patients); null without one.");

export const DeviceOut = z.object({
  id: z.string().describe("The hwi_device_id."),
  hwi_device_id: z.string().describe("UUID of the device (spec 2.4, 6.2)."),
  device: z.object({
    id: z.string().describe("Id of the inner device object (stable, derived from the device id)."),
    name: z.string().describe("Device type name as hwi-device-types lists it."),
    sensor_code: text().describe("A string; null for direct-cellular types (spec 2.8)."),
    hardware_uuid: text(),
    created: iso(),
    fulfillment_request: FulfilmentRequestOut,
    meta_data: z.unknown().describe("Client metadata; null when none."),
    shared_hardware_uuid: z
      .boolean()
      .describe("Another device of the account is on the same gateway."),
  }),
  patient: DevicePatientOut,
  patient_id: text().describe("The patient's external_id (spec 6.2)."),
  patient_phone_number: text(),
  status: z
    .string()
    .describe(
      "Active, Unknown Gateway ID (gateway id never seen: still created), a fulfilment status of spec 3 (Ready to Ship, Client Action Required, Dropshipped, …), Replaced or Unlinked. Replaced lasts while the replacement gateway (or new unit of a direct-cellular device) is on its way: once it is delivered or collected, the devices it carries are Active again (rpmlab's decision; the spec shows no status after Replaced).",
    ),
  hardware_uuid: text().describe("Current gateway id or IMEI; null once unlinked (spec 3)."),
  sensor_id: text(),
  properties: z.array(z.object({ key: z.string(), value: z.string() })),
  require_signature: z.boolean(),
  ship_gateway_only: z.boolean(),
});

export type DeviceJson = z.output<typeof DeviceOut>;
export const DEVICE_JSON_SCHEMA = toJsonSchema(DeviceOut);

export function deviceJson(r: DeviceRecord): DeviceJson {
  const request = r.device.fulfillment_request;
  return {
    ...r,
    device: {
      ...r.device,
      created: toIsoMicros(r.device.created),
      fulfillment_request:
        request === null ? null : { ...request, created: toIsoMicros(request.created) },
    },
    properties: [...r.properties],
  };
}

/** Documentation of the POST body; src/fulfilment/activation-input.ts validates it. */
export const ACTIVATION_BODY = documentedBody(
  drfObject({
    device: drfObject({
      name: charField().describe(
        "A name hwi-device-types lists; legacy names are accepted and mapped (Vendor BPM - L → Vendor BPM - Wide Range, spec 2.4).",
      ),
      hardware_uuid: optionalText(
        "The gateway id (12 hex characters, hyphens and case ignored) or, for a direct-cellular type, the 15-digit IMEI. Left out: a fulfilment request (the lab ships the hardware). A gateway a replacement gateway took over from (spec 4.3) puts the device on the replacement, with the old gateway's devices: the response's hardware_uuid says which.",
      ),
    }),
    sensor_id: optionalText(
      "Required by types told apart by sensor id on one gateway (inhaler sensor: its serial number); refused by the others (spec 2.4, 2.8).",
    ),
    patient: drfObject({
      external_id: charField().describe(
        "Links the existing patient (ignoring case) or creates one holding only this external_id (spec 2.1).",
      ),
    })
      .nullable()
      .optional(),
    require_signature: booleanField().optional().describe("Proof of delivery (default false)."),
    ship_gateway_only: booleanField()
      .optional()
      .describe("Ship only a gateway (default false); not with a hardware_uuid."),
    delivery_type: optionalText("Deprecated: Priority or Shipping (spec 2.4).", "Shipping"),
  }),
  "Device activation (spec 2.4, 4.3). Unknown keys are ignored.",
);

/** Documentation of the PUT body; src/fulfilment/device-update.ts validates it. */
export const DEVICE_UPDATE_BODY = documentedBody(
  drfObject({
    patient: drfObject({
      external_id: optionalText("Attaches this patient (created if absent, spec 2.1)."),
      name: optionalText("Full name."),
      address: optionalText("Street address."),
      city: optionalText("City."),
      state: optionalText("Two-letter state code."),
      zip_code: optionalText("ZIP or ZIP+4."),
      phone_number: optionalText("Phone number."),
      email: optionalText("Email."),
      physician: optionalText("Physician."),
      clinic_name: optionalText("Clinic name."),
      care_manager: optionalText("Care manager."),
      sms_opt_in: booleanField().optional(),
      confirm_address: booleanField().optional(),
    })
      .nullable()
      .optional(),
  }),
  "Only fields within the nested patient change (spec 4.3); every other key is read-only and ignored. patient null detaches the patient.",
);
