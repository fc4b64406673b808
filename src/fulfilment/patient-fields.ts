import { readBool, readText } from "../core/drf-read.ts";
import type { FieldErrorCollector } from "../core/field-errors.ts";
import type { PatientFields } from "../store/types.ts";

/** Spec 2.1's writable text fields: wire name → row field. */
const TEXT_FIELDS = {
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
} as const satisfies Record<string, keyof PatientFields>;

const BOOL_FIELDS = {
  sms_opt_in: "smsOptIn",
  confirm_address: "confirmAddress",
} as const satisfies Record<string, keyof PatientFields>;

/** The address fields whose change re-runs verification (spec 3). */
const ADDRESS_KEYS = ["address", "city", "state", "zip_code", "confirm_address"];

export type WritablePatientFields = Partial<
  Omit<PatientFields, "addressStatus" | "addressVerifiedBy">
>;

export interface NestedPatient {
  /** Present when the body names the patient to attach. */
  readonly externalId: string | undefined;
  /** Only the fields the body sent. */
  readonly fields: WritablePatientFields;
  /** The body sent an address field or confirm_address. */
  readonly touchesAddress: boolean;
}

/**
 * The nested patient object of a device PUT (spec 4.3), read like DRF's patient serializer with
 * partial semantics: only the fields sent change. address_status and address_verified_by are
 * read-only (spec 2.1) and ignored, as are unknown keys. Text fields take null or "" to clear.
 */
export function readNestedPatient(
  errors: FieldErrorCollector,
  value: Record<string, unknown>,
): NestedPatient {
  const externalId = readText(errors, ["patient", "external_id"], value.external_id);
  const fields: Record<string, unknown> = {};
  for (const [wire, field] of Object.entries(TEXT_FIELDS)) {
    const text = readText(errors, ["patient", wire], value[wire], {
      allowNull: true,
      allowBlank: true,
    });
    if (text !== undefined) fields[field] = text;
  }
  for (const [wire, field] of Object.entries(BOOL_FIELDS)) {
    const flag = readBool(errors, ["patient", wire], value[wire]);
    if (flag !== undefined) fields[field] = flag;
  }
  return {
    externalId: typeof externalId === "string" ? externalId : undefined,
    fields: fields as WritablePatientFields,
    touchesAddress: ADDRESS_KEYS.some((k) => value[k] !== undefined),
  };
}
