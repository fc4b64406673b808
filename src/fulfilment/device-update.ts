import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import { MESSAGES, notADictionaryBody } from "../core/drf-fields.ts";
import { RpmlabError } from "../core/errors.ts";
import { FieldErrorCollector, isPlainObject } from "../core/field-errors.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceRow, DeviceWithPatient, Ms, PatientRow } from "../store/types.ts";
import { nextAddressState } from "./address-status.ts";
import {
  DEFAULT_UNDELIVERABLE_ADDRESSES,
  type UndeliverableAddress,
  verifyAddress,
} from "./address-verification.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import type { PendingEvents } from "./events.ts";
import { type NestedPatient, readNestedPatient } from "./patient-fields.ts";
import { holdPatientless, reviewRequests } from "./request-review.ts";

export interface DeviceUpdateDeps extends DeviceServiceDeps {
  readonly fulfilment: FulfilmentConfig;
  /** Addresses verification answers Invalid for (the API's config); default the lab's list. */
  readonly undeliverableAddresses?: readonly UndeliverableAddress[];
}

export interface DeviceUpdateResult {
  readonly device: DeviceWithPatient;
  /** Spec 2.1: the external_id named a patient that did not exist; it was created. */
  readonly patientCreated: boolean;
  /** Keys of the body outside `patient`: read-only on this call, ignored (spec 4.3). */
  readonly ignored: readonly string[];
  /** Requests of the patient that left Client Action Required (Ready to Ship or On Hold). */
  readonly released: readonly DeviceRow[];
}

/**
 * PUT hwi-devices/{id}/ (spec 4.3): "only fields within the nested patient object can be
 * modified; set patient.external_id to attach a patient". As DRF treats read-only fields, every
 * other key of the body (device, sensor_id, status, require_signature, …) is ignored, not
 * refused. Inside `patient`:
 * - external_id attaches that patient (found ignoring case, or created holding only the
 *   external_id, spec 2.1); without it the fields apply to the patient already attached, and a
 *   device without one needs it;
 * - the other fields sent change that patient record (only those sent), with the address
 *   re-verified when an address field or confirm_address is sent (spec 3);
 * - `"patient": null` detaches the patient (the device keeps running without patient data, as
 *   after a patient DELETE, spec 4.1).
 * Readings already stored keep the patient_id they were taken under (spec 6.2: stable).
 */
export class DeviceUpdate {
  constructor(private readonly deps: DeviceUpdateDeps) {}

  async update(accountId: string, deviceId: string, body: unknown): Promise<DeviceUpdateResult> {
    const errors = new FieldErrorCollector();
    if (!isPlainObject(body)) {
      errors.add("non_field_errors", notADictionaryBody(body));
      errors.throwIfAny();
    }
    const input = body as Record<string, unknown>;
    const current = await this.deps.store.devices.get(accountId, deviceId);
    if (current === null) {
      throw new RpmlabError("E_STORE_NOT_FOUND", `device ${deviceId} not found`, { id: deviceId });
    }
    const ignored = Object.keys(input).filter((k) => k !== "patient");
    const unchanged = { device: current, patientCreated: false, ignored, released: [] };
    const patientValue = input.patient;
    if (patientValue === undefined) return unchanged;
    if (patientValue === null) {
      if (current.patientId === null) return unchanged;
      const device = await atomically(this.deps, async (tx, events) => {
        await tx.devices.update(accountId, deviceId, { patientId: null });
        // Its request, accepted and not shipped, has no address left to go to.
        const shipping = { catalogue: this.deps.catalogue, config: this.deps.fulfilment };
        const args = { accountId, deviceIds: [deviceId], at: this.deps.clock.now() };
        await holdPatientless(tx, events, shipping, args);
        await this.reviewLeft(tx, events, { ...args, patientId: current.patientId! });
        return (await tx.devices.get(accountId, deviceId))!;
      });
      return { ...unchanged, device };
    }
    if (!isPlainObject(patientValue)) {
      errors.add(["patient", "non_field_errors"], MESSAGES.dictionary(patientValue));
      errors.throwIfAny();
    }
    const nested = readNestedPatient(errors, patientValue as Record<string, unknown>);
    if (nested.externalId === undefined && current.patient === null) {
      if (!errors.has(["patient", "external_id"])) {
        errors.add(
          ["patient", "external_id"],
          "This field is required: the device has no patient to update; external_id attaches one.",
        );
      }
    }
    errors.throwIfAny();
    return atomically(this.deps, async (tx, events) => {
      const { patient, created } = await this.target(tx, accountId, current, nested);
      if (created) events.add("patient.written", { action: "created", patient });
      const updated = await this.applyFields(tx, accountId, patient, nested);
      if (updated !== patient)
        events.add("patient.written", { action: "updated", patient: updated });
      if (current.patientId !== updated.id) {
        await tx.devices.update(accountId, deviceId, { patientId: updated.id });
      }
      const shipping = { catalogue: this.deps.catalogue, config: this.deps.fulfilment };
      const at = this.deps.clock.now();
      const released = await reviewRequests(tx, events, shipping, {
        accountId,
        patient: updated,
        at,
      });
      if (current.patientId !== null && current.patientId !== updated.id) {
        await this.reviewLeft(tx, events, { accountId, patientId: current.patientId, at });
      }
      const device = (await tx.devices.get(accountId, deviceId))!;
      return { device, patientCreated: created, ignored, released };
    });
  }

  /**
   * The patient a request left: a duplicate of it held there (spec 3) is that patient's
   * request now, and goes ahead as when the request it duplicated is cancelled, instead of
   * being cleaned up (Cancelled) as a duplicate of nothing.
   */
  private async reviewLeft(
    tx: StoreRepositories,
    events: PendingEvents,
    args: { readonly accountId: string; readonly patientId: number; readonly at: Ms },
  ): Promise<void> {
    const { accountId, patientId, at } = args;
    const patient = await tx.patients.getById(accountId, patientId);
    if (patient === null) return;
    const shipping = { catalogue: this.deps.catalogue, config: this.deps.fulfilment };
    await reviewRequests(tx, events, shipping, { accountId, patient, at });
  }

  private async target(
    tx: StoreRepositories,
    accountId: string,
    current: DeviceWithPatient,
    nested: NestedPatient,
  ): Promise<{ patient: PatientRow; created: boolean }> {
    if (nested.externalId !== undefined) return tx.patients.ensure(accountId, nested.externalId);
    const patient = await tx.patients.getById(accountId, current.patientId!);
    return { patient: patient!, created: false };
  }

  private async applyFields(
    tx: StoreRepositories,
    accountId: string,
    before: PatientRow,
    nested: NestedPatient,
  ): Promise<PatientRow> {
    const { fields } = nested;
    if (Object.keys(fields).length === 0) return before;
    const pick = <K extends keyof PatientRow>(k: K) =>
      (k in fields ? fields[k as keyof typeof fields] : before[k]) as PatientRow[K];
    const undeliverable = this.deps.undeliverableAddresses ?? DEFAULT_UNDELIVERABLE_ADDRESSES;
    const state = nextAddressState(
      {
        before,
        after: {
          address: pick("address"),
          city: pick("city"),
          state: pick("state"),
          zipCode: pick("zipCode"),
          confirmAddress: pick("confirmAddress"),
        },
        touched: nested.touchesAddress,
      },
      (address) => verifyAddress(address, undeliverable),
    );
    return tx.patients.update(accountId, before.externalId, { ...fields, ...state });
  }
}
