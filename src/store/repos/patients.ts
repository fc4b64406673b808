import type { Selectable, Updateable } from "kysely";
import { atomic, type Ctx, conflict, countOf, invalid, notFound, paged } from "../context.ts";
import type { Dialect } from "../dialect.ts";
import { readBool, readNum } from "../dialect.ts";
import type { PatientsTable } from "../schema.ts";
import type { PatientsRepo } from "../store.ts";
import type { AddressStatus, PatientFields, PatientPatch, PatientRow } from "../types.ts";

/** Spec 2.1 defaults: every text field empty, sms_opt_in true, confirm_address false. */
const DEFAULTS: PatientFields = {
  name: null,
  address: null,
  city: null,
  state: null,
  zipCode: null,
  phoneNumber: null,
  email: null,
  physician: null,
  clinicName: null,
  careManager: null,
  smsOptIn: true,
  confirmAddress: false,
  addressStatus: null,
  addressVerifiedBy: null,
};

const COLUMNS: Record<keyof PatientFields, keyof PatientsTable> = {
  name: "name",
  address: "address",
  city: "city",
  state: "state",
  zipCode: "zip_code",
  phoneNumber: "phone_number",
  email: "email",
  physician: "physician",
  clinicName: "clinic_name",
  careManager: "care_manager",
  smsOptIn: "sms_opt_in",
  confirmAddress: "confirm_address",
  addressStatus: "address_status",
  addressVerifiedBy: "address_verified_by",
};

export function toPatientRow(r: Selectable<PatientsTable>): PatientRow {
  return {
    id: readNum(r.id),
    accountId: r.account_id,
    externalId: r.external_id,
    name: r.name,
    address: r.address,
    city: r.city,
    state: r.state,
    zipCode: r.zip_code,
    phoneNumber: r.phone_number,
    email: r.email,
    physician: r.physician,
    clinicName: r.clinic_name,
    careManager: r.care_manager,
    smsOptIn: readBool(r.sms_opt_in),
    confirmAddress: readBool(r.confirm_address),
    addressStatus: r.address_status as AddressStatus | null,
    addressVerifiedBy: r.address_verified_by,
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}

/** Column values for the fields present in `fields` (booleans encoded for the dialect). */
function columnsOf(d: Dialect, fields: Partial<PatientFields>): Updateable<PatientsTable> {
  const out: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(COLUMNS) as [keyof PatientFields, string][]) {
    const value = fields[field];
    if (value === undefined) continue;
    out[column] = typeof value === "boolean" ? d.toBool(value) : value;
  }
  const status = fields.addressStatus;
  if (status !== undefined && status !== null && status !== "Verified" && status !== "Invalid") {
    throw invalid("address_status must be Verified or Invalid", { field: "address_status" });
  }
  return out as Updateable<PatientsTable>;
}

function checkExternalId(externalId: string): string {
  if (externalId.trim() === "") throw invalid("external_id is required", { field: "external_id" });
  return externalId;
}

/** Spec 2.1 / 4.1: patients keyed by external_id, unique and looked up ignoring case. */
export function patientsRepo(ctx: Ctx): PatientsRepo {
  const { db, d } = ctx;
  const byExternalId = (accountId: string, externalId: string, on: Ctx["db"] = db) =>
    on
      .selectFrom("patients")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("external_id_lc", "=", externalId.toLowerCase());

  const insert = (accountId: string, externalId: string, fields: Partial<PatientFields>) => {
    const now = ctx.clock.now();
    return db
      .insertInto("patients")
      .values({
        ...(columnsOf(d, { ...DEFAULTS, ...fields }) as Required<Updateable<PatientsTable>>),
        account_id: accountId,
        external_id: checkExternalId(externalId),
        external_id_lc: externalId.toLowerCase(),
        created: now,
        modified: now,
      })
      .onConflict((oc) => oc.columns(["account_id", "external_id_lc"]).doNothing())
      .returningAll()
      .executeTakeFirst();
  };

  const write = (
    accountId: string,
    externalId: string,
    fields: Partial<PatientFields>,
    newExternalId: string | undefined,
  ) =>
    atomic(ctx, async ({ db: tx }) => {
      const current = await byExternalId(accountId, externalId, tx).executeTakeFirst();
      if (current === undefined) throw notFound("patient", { external_id: externalId });
      const rename = newExternalId !== undefined && newExternalId !== current.external_id;
      if (rename) {
        const other = await byExternalId(
          accountId,
          checkExternalId(newExternalId),
          tx,
        ).executeTakeFirst();
        if (other !== undefined && other.id !== current.id) {
          throw conflict(`patient external_id "${newExternalId}" already exists`, {
            field: "external_id",
            value: newExternalId,
          });
        }
      }
      const r = await tx
        .updateTable("patients")
        .set({
          ...columnsOf(d, fields),
          ...(rename
            ? { external_id: newExternalId, external_id_lc: newExternalId.toLowerCase() }
            : {}),
          modified: ctx.clock.now(),
        })
        .where("id", "=", current.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (rename) {
        // Spec 6.2: a record's patient_id equals the patient's external_id, and the patient
        // measurement paths match it exactly (spec 4.4): the history follows the patient, and
        // a patient given the old id later starts without it.
        await tx
          .updateTable("measurements")
          .set({ patient_external_id: newExternalId })
          .where("account_id", "=", accountId)
          .where("patient_external_id", "=", current.external_id)
          .execute();
      }
      return toPatientRow(r);
    });

  return {
    async create(accountId, input) {
      const { externalId, ...fields } = input;
      const r = await insert(accountId, externalId, fields);
      if (r === undefined) {
        throw conflict(`patient external_id "${externalId}" already exists`, {
          field: "external_id",
          value: externalId,
        });
      }
      return toPatientRow(r);
    },
    async ensure(accountId, externalId) {
      const created = await insert(accountId, externalId, {});
      if (created !== undefined) return { patient: toPatientRow(created), created: true };
      const existing = await byExternalId(accountId, externalId).executeTakeFirstOrThrow();
      return { patient: toPatientRow(existing), created: false };
    },
    async get(accountId, externalId) {
      const r = await byExternalId(accountId, externalId).executeTakeFirst();
      return r === undefined ? null : toPatientRow(r);
    },
    async getById(accountId, id) {
      const r = await db
        .selectFrom("patients")
        .selectAll()
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .executeTakeFirst();
      return r === undefined ? null : toPatientRow(r);
    },
    async list(accountId, page) {
      const base = db.selectFrom("patients").selectAll().where("account_id", "=", accountId);
      const rows = await paged(base.orderBy("created").orderBy("id"), page).execute();
      const total = page?.count ? await countOf(base) : undefined;
      return { rows: rows.map(toPatientRow), ...(total === undefined ? {} : { total }) };
    },
    replace(accountId, externalId, input) {
      const { externalId: newExternalId, ...fields } = input;
      return write(accountId, externalId, { ...DEFAULTS, ...fields }, newExternalId);
    },
    update(accountId, externalId, patch: PatientPatch) {
      const { externalId: newExternalId, ...fields } = patch;
      return write(accountId, externalId, fields, newExternalId);
    },
    delete: (accountId, externalId) =>
      atomic(ctx, async (tx) => {
        // devices.patient_id is ON DELETE SET NULL: linked devices stay, without patient data.
        const gone = await tx.db
          .deleteFrom("patients")
          .where("account_id", "=", accountId)
          .where("external_id_lc", "=", externalId.toLowerCase())
          .returning("external_id")
          .executeTakeFirst();
        if (gone === undefined) return false;
        // Their readings too (spec 4.1): the patient measurement paths match patient_id exactly
        // (spec 4.4), and a patient given the id later must not receive the deleted one's.
        await tx.db
          .updateTable("measurements")
          .set({ patient_external_id: null })
          .where("account_id", "=", accountId)
          .where("patient_external_id", "=", gone.external_id)
          .execute();
        return true;
      }),
  };
}
