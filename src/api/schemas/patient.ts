import { z } from "zod";
import { booleanField, charField, drfObject, optionalText } from "../../core/drf-fields.ts";
import type { PatientFields, PatientRow } from "../../store/types.ts";
import { toJsonSchema } from "../json-schema.ts";

/** The patient record of spec 2.1, field for field, in the spec's order. */

const ADDRESS_NOTE = "Needed for address verification (with address, city, state and zip_code).";

const externalId = charField().describe(
  "The client's identifier for the patient; unique in the account, ignoring case. Lookups by it ignore case. On PUT or PATCH a new value renames the patient.",
);

const OPTIONAL_FIELDS = {
  name: optionalText("Full name."),
  address: optionalText(`Street address: a house number and a street name. ${ADDRESS_NOTE}`),
  city: optionalText(ADDRESS_NOTE),
  state: optionalText(`Two-letter US state or territory code. ${ADDRESS_NOTE}`),
  zip_code: optionalText(`5 or 9 digits (ZIP+4, hyphen optional). ${ADDRESS_NOTE}`),
  phone_number: optionalText("Used by support for service requests and SMS notifications."),
  email: optionalText("Not validated. Used by support for service requests."),
  physician: optionalText("Forwarded to the fulfilment team for per-provider shipping."),
  clinic_name: optionalText("Clinic or organisation name."),
  care_manager: optionalText("Name of the assigned care manager."),
  sms_opt_in: booleanField()
    .optional()
    .describe("Default true. Set false when the patient has not consented to SMS."),
  confirm_address: booleanField()
    .optional()
    .describe(
      "Default false. true bypasses address verification (the address is independently confirmed).",
    ),
};

/** POST and PUT: the whole record; fields left out take their defaults. */
export const PatientBody = drfObject({ external_id: externalId, ...OPTIONAL_FIELDS });
/** PATCH: any subset. */
export const PatientPatchBody = drfObject({
  external_id: externalId.optional(),
  ...OPTIONAL_FIELDS,
});

export type PatientInput = z.output<typeof PatientBody>;
export type PatientPatchInput = z.output<typeof PatientPatchBody>;

const text = () => z.string().nullable();

export const PatientOut = z.object({
  external_id: z.string(),
  name: text(),
  address: text(),
  city: text(),
  state: text(),
  zip_code: text(),
  phone_number: text(),
  email: text(),
  physician: text(),
  clinic_name: text(),
  care_manager: text(),
  sms_opt_in: z.boolean(),
  confirm_address: z.boolean(),
  address_status: z
    .enum(["Verified", "Invalid"])
    .nullable()
    .describe(
      "Verified or Invalid after verification; null while an address field is missing or when confirm_address bypassed it for a new address.",
    ),
  address_verified_by: z
    .string()
    .nullable()
    .describe('"internal" when rpmlab verified the address; null otherwise.'),
});

export type PatientJson = z.output<typeof PatientOut>;

export const PATIENT_JSON_SCHEMA = toJsonSchema(PatientOut);

export function patientJson(p: PatientRow): PatientJson {
  return {
    external_id: p.externalId,
    name: p.name,
    address: p.address,
    city: p.city,
    state: p.state,
    zip_code: p.zipCode,
    phone_number: p.phoneNumber,
    email: p.email,
    physician: p.physician,
    clinic_name: p.clinicName,
    care_manager: p.careManager,
    sms_opt_in: p.smsOptIn,
    confirm_address: p.confirmAddress,
    address_status: p.addressStatus,
    address_verified_by: p.addressVerifiedBy,
  };
}

type Writable = Omit<PatientFields, "addressStatus" | "addressVerifiedBy">;

const FIELD_NAMES: Record<Exclude<keyof PatientPatchInput, "external_id">, keyof Writable> = {
  name: "name",
  address: "address",
  city: "city",
  state: "state",
  zip_code: "zipCode",
  phone_number: "phoneNumber",
  email: "email",
  physician: "physician",
  clinic_name: "clinicName",
  care_manager: "careManager",
  sms_opt_in: "smsOptIn",
  confirm_address: "confirmAddress",
};

/** The fields a body sent, as the store names them (absent fields stay absent). */
export function patientFields(body: PatientPatchInput): Partial<Writable> {
  const out: Record<string, unknown> = {};
  for (const [wire, field] of Object.entries(FIELD_NAMES)) {
    const value = body[wire as keyof typeof FIELD_NAMES];
    if (value !== undefined) out[field] = value;
  }
  return out as Partial<Writable>;
}

/** Body keys that are address fields or confirm_address: sending one re-verifies (spec 3). */
export const ADDRESS_KEYS = ["address", "city", "state", "zip_code", "confirm_address"] as const;
