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
}

/**
 * Patient writes with address verification (spec 3 transitions): every create or update that
 * touches the address runs the rule-based verifier, in the same transaction as the write.
 */
export function patientService(deps: {
  store: Store;
  undeliverableAddresses?: readonly UndeliverableAddress[];
}): PatientService {
  const { store } = deps;
  const undeliverable = deps.undeliverableAddresses ?? DEFAULT_UNDELIVERABLE_ADDRESSES;
  const verify = (a: PostalAddress) => verifyAddress(a, undeliverable);

  const existing = async (tx: StoreRepositories, accountId: string, externalId: string) => {
    const patient = await tx.patients.get(accountId, externalId);
    if (patient === null) throw apiError.notFound(PATIENT_NOT_FOUND);
    return patient;
  };

  const update = (tx: StoreRepositories, before: PatientRow, body: PatientPatchInput) => {
    const fields = patientFields(body);
    const after = { ...before, ...fields };
    const touched = ADDRESS_KEYS.some((key) => body[key] !== undefined);
    const state = nextAddressState({ before, after, touched }, verify);
    const patch = body.external_id === undefined ? {} : { externalId: body.external_id };
    return tx.patients.update(before.accountId, before.externalId, {
      ...fields,
      ...patch,
      ...state,
    });
  };

  return {
    create: (accountId, body) =>
      unique(() => {
        const fields = patientFields(body);
        const after = { ...fields, confirmAddress: fields.confirmAddress ?? false };
        const state = nextAddressState({ before: null, after, touched: true }, verify);
        return store.patients.create(accountId, {
          externalId: body.external_id,
          ...fields,
          ...state,
        });
      }),

    replace: (accountId, externalId, body) =>
      unique(() =>
        store.transaction(async (tx) => {
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
          return tx.patients.replace(accountId, before.externalId, {
            externalId: body.external_id,
            ...fields,
            ...state,
          });
        }),
      ),

    update: (accountId, externalId, body) =>
      unique(() =>
        store.transaction(async (tx) =>
          update(tx, await existing(tx, accountId, externalId), body),
        ),
      ),

    upsertNested: (accountId, body) =>
      store.transaction(async (tx) => {
        const ensured = await tx.patients.ensure(accountId, body.external_id);
        const { external_id: _, ...rest } = body;
        if (Object.values(rest).every((v) => v === undefined)) return ensured;
        return { patient: await update(tx, ensured.patient, rest), created: ensured.created };
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
