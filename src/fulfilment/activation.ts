import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import { isRpmlabError } from "../core/errors.ts";
import { FieldErrorCollector } from "../core/field-errors.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceWithPatient, PatientRow } from "../store/types.ts";
import { type ActivationInput, parseActivation } from "./activation-input.ts";
import { AccountBoxes } from "./billing-start.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import { withFulfilmentRequest } from "./device-meta.ts";
import { checkSlotFree } from "./gateway-slots.ts";
import { bindHardware, gatewayOwnedElsewhere, isKnownGateway } from "./hardware-binding.ts";
import { successorGateway } from "./replaced-gateway.ts";
import { addressProblem, duplicateReason } from "./request-review.ts";
import { openShipment } from "./shipment-intake.ts";
import {
  ACTIVE,
  type FulfilmentStatus,
  isFulfilmentStatus,
  PENDING_STATUSES,
  UNKNOWN_GATEWAY,
} from "./statuses.ts";
import { checkWhitelistRoom } from "./whitelist-room.ts";

export interface ActivationResult {
  readonly device: DeviceWithPatient;
  /** Spec 2.1: true when the nested patient did not exist and was created (external_id only). */
  readonly patientCreated: boolean;
  /** False for a fulfilment request, a direct-cellular device, or an unknown gateway id. */
  readonly gatewayKnown: boolean;
  readonly orphansAttached: number;
  /** Why the request needs the client (status Client Action Required), else null. */
  readonly reason: string | null;
}

export interface DeviceActivationDeps extends DeviceServiceDeps {
  /** The fulfilment simulator's settings: a request's shipment is opened here. */
  readonly fulfilment: FulfilmentConfig;
}

/**
 * POST hwi-devices (spec 2.4, 4.3; wire-formats "Devices"). The status a new device gets:
 * - hardware in hand (device.hardware_uuid sent):
 *   Active on a known gateway or on an IMEI; Unknown Gateway ID on a gateway id the lab has
 *   never seen (still created, 201), until that gateway shows up (gateway-adoption.ts). On a
 *   gateway a replacement took over from: on the replacement gateway (replaced-gateway.ts).
 * - no hardware_uuid: a fulfilment request (the lab ships the device, or only a gateway with
 *   ship_gateway_only): Ready to Ship (On Hold on a seeded stock shortage), or Client Action
 *   Required when the patient's address is missing or Invalid (and not confirmed) or the
 *   request duplicates a pending one (spec 3); its shipment opens (shipment-intake.ts) and the
 *   fulfilment simulator moves it on from there.
 * Hardware in hand bills from activation (README "Billing"); a shipped device from delivery.
 * Everything is written in one transaction; events follow the commit.
 */
export class DeviceActivation {
  constructor(private readonly deps: DeviceActivationDeps) {}

  async activate(accountId: string, body: unknown): Promise<ActivationResult> {
    const input = await this.onSuccessor(accountId, parseActivation(this.deps.catalogue, body));
    await this.checkHardware(accountId, input);
    return atomically(this.deps, async (tx, events) => {
      const at = this.deps.clock.now();
      const ensured =
        input.patientExternalId === null
          ? null
          : await tx.patients.ensure(accountId, input.patientExternalId);
      const patient = ensured?.patient ?? null;
      if (ensured?.created)
        events.add("patient.written", { action: "created", patient: ensured.patient });
      await recheckWhitelistRoom(tx, accountId, input);
      const { status, reason } = await this.initialStatus(tx, accountId, input, patient);
      const created = await this.create(tx, accountId, input, patient, status, reason, at);
      const binding = await bindHardware(tx, events, {
        device: created,
        profile: input.profile,
        patientExternalId: patient?.externalId ?? null,
        at,
      });
      const patientExternalId = patient?.externalId ?? null;
      if (isFulfilmentStatus(status)) {
        const shipment = await openShipment(
          tx,
          events,
          { catalogue: this.deps.catalogue, config: this.deps.fulfilment },
          {
            accountId,
            id: created.id,
            kind: "device",
            deviceId: created.id,
            heldFor: reason,
            requireSignature: input.requireSignature,
            shipGatewayOnly: input.shipGatewayOnly,
            deliveryType: input.deliveryType,
            at,
          },
        );
        // On Hold: the stock draw of the shipment overrides the accepted status.
        if (shipment.status !== status) {
          await tx.devices.update(accountId, created.id, { status: shipment.status });
        }
      } else if (
        status !== UNKNOWN_GATEWAY &&
        (await new AccountBoxes(tx, accountId).hardwareHere(created.hardwareUuid))
      ) {
        // Hardware in hand bills from now; a device on a gateway still in one of the lab's boxes
        // (on its way, or held) from that box's delivery (README "Billing", billing-start.ts).
        // A gateway id the lab has never seen (a typo, or a hub not yet powered) has no device
        // in use behind it: billing starts when the gateway first reports (gateway-adoption.ts).
        await tx.billingPeriods.open(accountId, created.id, at, "activation");
      }
      const device = (await tx.devices.get(accountId, created.id))!;
      if (isFulfilmentStatus(device.status)) {
        events.add("fulfilment.status", {
          accountId,
          device,
          patientExternalId,
          status: device.status,
          previousHardwareUuid: null,
          reason,
          trackingLink: null,
          at,
        });
      } else {
        events.add("device.activated", {
          accountId,
          device,
          patientExternalId,
          gatewayKnown: binding.gatewayKnown,
          orphansAttached: binding.orphansAttached,
          at,
        });
      }
      return {
        device,
        patientCreated: ensured?.created ?? false,
        gatewayKnown: binding.gatewayKnown,
        orphansAttached: binding.orphansAttached,
        reason,
      };
    });
  }

  /**
   * A gateway device activated on a gateway id a replacement took over from goes on the
   * replacement gateway, with the devices it moved (replaced-gateway.ts; README "Devices").
   */
  private async onSuccessor(accountId: string, input: ActivationInput): Promise<ActivationInput> {
    if (input.hardwareUuid === null || input.profile.identity !== "gateway") return input;
    const successor = await successorGateway(this.deps.store, accountId, input.hardwareUuid);
    return successor === null ? input : { ...input, hardwareUuid: successor };
  }

  /**
   * The rules that need the store, reported together (spec 2.8 slots, spec 4.2 owner, the
   * whitelist's length: whitelist-room.ts).
   */
  private async checkHardware(accountId: string, input: ActivationInput): Promise<void> {
    const { hardwareUuid, profile } = input;
    if (hardwareUuid === null) return;
    const errors = new FieldErrorCollector();
    await checkSlotFree(this.deps.store, errors, {
      accountId,
      profile,
      hardwareUuid,
      sensorId: input.sensorId,
    });
    if (profile.identity === "gateway") {
      const gateway = await this.deps.store.gateways.get(hardwareUuid);
      const owner = gateway?.accountId ?? null;
      if (owner !== null && owner !== accountId) {
        throw gatewayOwnedElsewhere(hardwareUuid);
      }
      await checkWhitelistRoom(this.deps.store, errors, { accountId, profile, hardwareUuid });
    }
    errors.throwIfAny();
  }

  private async initialStatus(
    tx: StoreRepositories,
    accountId: string,
    input: ActivationInput,
    patient: PatientRow | null,
  ): Promise<{ status: string; reason: string | null }> {
    if (input.hardwareUuid !== null) {
      if (input.profile.identity === "imei") return { status: ACTIVE, reason: null };
      const known = isKnownGateway(await tx.gateways.get(input.hardwareUuid));
      return { status: known ? ACTIVE : UNKNOWN_GATEWAY, reason: null };
    }
    const reason = await actionRequired(tx, accountId, input, patient);
    const status: FulfilmentStatus = reason === null ? "Ready to Ship" : "Client Action Required";
    return { status, reason };
  }

  private async create(
    tx: StoreRepositories,
    accountId: string,
    input: ActivationInput,
    patient: PatientRow | null,
    status: string,
    reason: string | null,
    at: number,
  ) {
    try {
      return await tx.devices.create(accountId, {
        name: input.profile.name,
        sensorCode: input.profile.sensor_code,
        hardwareUuid: input.hardwareUuid,
        sensorId: input.sensorId,
        patientId: patient?.id ?? null,
        status,
        requireSignature: input.requireSignature,
        shipGatewayOnly: input.shipGatewayOnly,
        metaData:
          input.hardwareUuid === null
            ? withFulfilmentRequest({ delivery_type: input.deliveryType, requested: at, reason })
            : null,
      });
    } catch (error) {
      // Another activation took the slot since checkHardware looked: same 400 as the check.
      if (!isRpmlabError(error, "E_STORE_CONFLICT") || input.hardwareUuid === null) throw error;
      const errors = new FieldErrorCollector();
      await checkSlotFree(tx, errors, {
        accountId,
        profile: input.profile,
        hardwareUuid: input.hardwareUuid,
        sensorId: input.sensorId,
      });
      errors.throwIfAny();
      throw error;
    }
  }
}

/**
 * Another activation may have filled the gateway since checkHardware looked: the same 400. The
 * count holds until this transaction commits because the store runs its transactions one at a
 * time (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL: postgres-dialect.ts), so two
 * racing activations cannot both take the last entry (test: whitelist-room section, on each store).
 */
async function recheckWhitelistRoom(
  tx: StoreRepositories,
  accountId: string,
  input: ActivationInput,
): Promise<void> {
  const { hardwareUuid, profile } = input;
  if (hardwareUuid === null) return;
  const errors = new FieldErrorCollector();
  await checkWhitelistRoom(tx, errors, { accountId, profile, hardwareUuid });
  errors.throwIfAny();
}

/**
 * Spec 3, "request pending → Client Action Required when the address is Invalid or the
 * submission is a duplicate": a second request for the same patient and device type while one
 * is pending (request-review.ts has the address rules). Null: the request can go ahead.
 */
async function actionRequired(
  tx: StoreRepositories,
  accountId: string,
  input: ActivationInput,
  patient: PatientRow | null,
): Promise<string | null> {
  // A duplicate first: it stays one when the address is mended (reviewRequests leaves it
  // held, duplicate clean-up cancels it), where a request held for the address alone ships.
  if (patient !== null) {
    const { rows } = await tx.devices.list(accountId, {
      patientExternalId: patient.externalId,
      status: PENDING_STATUSES,
    });
    const open = rows.find((d) => d.name === input.profile.name && d.hardwareUuid === null);
    if (open !== undefined) return duplicateReason(open);
  }
  return addressProblem(patient);
}
