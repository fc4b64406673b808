import type { Clock } from "../../core/clock.ts";
import { isRpmlabError } from "../../core/errors.ts";
import { nextAddressState } from "../../fulfilment/address-status.ts";
import {
  DEFAULT_UNDELIVERABLE_ADDRESSES,
  type PostalAddress,
  type UndeliverableAddress,
  verifyAddress,
} from "../../fulfilment/address-verification.ts";
import type { Store, StoreRepositories } from "../../store/store.ts";
import type { PatientRow } from "../../store/types.ts";
import { recordPatientChange } from "../../webhooks/outbox.ts";
import { type PatientAction, patientWebhookBody } from "../../webhooks/payloads/patient.ts";
import { apiError } from "../errors.ts";
import {
  ADDRESS_KEYS,
  type PatientInput,
  type PatientPatchInput,
  patientFields,
} from "../schemas/patient.ts";

/** Django's unique-field message, as a DRF ModelSerializer words it (spec 7.3: a conflict). */
export const DUPLICATE_EXTERNAL_ID = "patient with this external id already exists.";
/** Django's get_object_or_404 text, which DRF returns as the 404 detail. */
export const PATIENT_NOT_FOUND = "No Patient matches the given query.";

export interface PatientService {
  /** POST hwi-patients/ (spec 4.1): 400 keyed external_id when it exists (any case). */
  create(accountId: string, body: PatientInput): Promise<PatientRow>;
  /** PUT: the whole record; fields left out return to their defaults. */
  replace(accountId: string, externalId: string, body: PatientInput): Promise<PatientRow>;
  /** PATCH: the fields sent. */
  update(accountId: string, externalId: string, body: PatientPatchInput): Promise<PatientRow>;
  /**
   * The nested patient of a device activation or update (spec 2.1, 2.4, 4.3): links to the
   * record of that external_id, creating it (holding only the external_id) when absent; other
   * fields sent update it as a PATCH would.
   */
  upsertNested(
    accountId: string,
    body: PatientPatchInput & { external_id: string },
  ): Promise<{ patient: PatientRow; created: boolean }>;
  /**
   * DELETE (spec 4.1): linked devices stay, without patient data; returns their ids. 404 when
   * absent.
   */
  delete(accountId: string, externalId: string): Promise<string[]>;
}

/**
 * Patient writes with address verification (spec 3 transitions): every create or update that
 * touches the address runs the rule-based verifier, in the same transaction as the write. Every
 * create, update and delete writes its patient webhook (spec 6.1) to the outbox in that
 * transaction too, and nudges the dispatcher once it committed.
 */
export function patientService(deps: {
  store: Store;
  clock: Clock;
  undeliverableAddresses?: readonly UndeliverableAddress[];
  /** Called after a write committed an outbox entry: the dispatcher has work. */
  onOutbox?: () => void;
}): PatientService {
  const { store, clock } = deps;
  const undeliverable = deps.undeliverableAddresses ?? DEFAULT_UNDELIVERABLE_ADDRESSES;
  const verify = (a: PostalAddress) => verifyAddress(a, undeliverable);

  const existing = async (tx: StoreRepositories, accountId: string, externalId: string) => {
    const patient = await tx.patients.get(accountId, externalId);
    if (patient === null) throw apiError.notFound(PATIENT_NOT_FOUND);
    return patient;
  };

  /** The patient webhook of a write, in the write's transaction. */
  const announce = async (
    tx: StoreRepositories,
    action: PatientAction,
    patient: PatientRow,
    previousExternalId: string | null = null,
  ): Promise<PatientRow> => {
    const at = action === "deleted" ? clock.now() : patient.modified;
    const body = patientWebhookBody(action, patient, at, previousExternalId);
    await recordPatientChange(tx, patient.accountId, body);
    return patient;
  };

  /** A write in a transaction; the dispatcher is nudged once it committed. */
  const write = async <T>(fn: (tx: StoreRepositories) => Promise<T>): Promise<T> => {
    const result = await store.transaction(fn);
    deps.onOutbox?.();
    return result;
  };

  const update = async (tx: StoreRepositories, before: PatientRow, body: PatientPatchInput) => {
    const fields = patientFields(body);
    const after = { ...before, ...fields };
    const touched = ADDRESS_KEYS.some((key) => body[key] !== undefined);
    const state = nextAddressState({ before, after, touched }, verify);
    const patch = body.external_id === undefined ? {} : { externalId: body.external_id };
    const updated = await tx.patients.update(before.accountId, before.externalId, {
      ...fields,
      ...patch,
      ...state,
    });
    return announce(tx, "updated", updated, before.externalId);
  };

  return {
    create: (accountId, body) =>
      unique(() =>
        write(async (tx) => {
          const fields = patientFields(body);
          const after = { ...fields, confirmAddress: fields.confirmAddress ?? false };
          const state = nextAddressState({ before: null, after, touched: true }, verify);
          const created = await tx.patients.create(accountId, {
            externalId: body.external_id,
            ...fields,
            ...state,
          });
          return announce(tx, "created", created);
        }),
      ),

    replace: (accountId, externalId, body) =>
      unique(() =>
        write(async (tx) => {
          const before = await existing(tx, accountId, externalId);
          const fields = patientFields(body);
          const after = {
            address: fields.address ?? null,
            city: fields.city ?? null,
            state: fields.state ?? null,
            zipCode: fields.zipCode ?? null,
            confirmAddress: fields.confirmAddress ?? false,
          };
          const state = nextAddressState({ before, after, touched: true }, verify);
          const replaced = await tx.patients.replace(accountId, before.externalId, {
            externalId: body.external_id,
            ...fields,
            ...state,
          });
          return announce(tx, "updated", replaced, before.externalId);
        }),
      ),

    update: (accountId, externalId, body) =>
      unique(() =>
        write(async (tx) => update(tx, await existing(tx, accountId, externalId), body)),
      ),

    upsertNested: (accountId, body) =>
      write(async (tx) => {
        const ensured = await tx.patients.ensure(accountId, body.external_id);
        if (ensured.created) await announce(tx, "created", ensured.patient);
        const { external_id: _, ...rest } = body;
        if (Object.values(rest).every((v) => v === undefined)) return ensured;
        return { patient: await update(tx, ensured.patient, rest), created: ensured.created };
      }),

    delete: (accountId, externalId) =>
      write(async (tx) => {
        const patient = await existing(tx, accountId, externalId);
        const { rows } = await tx.devices.list(accountId, {
          patientExternalId: patient.externalId,
        });
        await tx.patients.delete(accountId, patient.externalId);
        await announce(tx, "deleted", patient);
        return rows.map((d) => d.id);
      }),
  };
}

/** A unique external_id violation as the service answers it: 400 keyed external_id. */
async function unique<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isRpmlabError(error, "E_STORE_CONFLICT")) {
      throw apiError.field("external_id", DUPLICATE_EXTERNAL_ID);
    }
    throw error;
  }
}
