import type { StoreRepositories } from "../store/store.ts";
import type { DeviceRow, Ms, PatientRow } from "../store/types.ts";
import type { ShipmentRow } from "../store/types-shipments.ts";
import { isCompleteAddress } from "./address-verification.ts";
import { fulfilmentRequestOf, withFulfilmentRequest } from "./device-meta.ts";
import type { PendingEvents } from "./events.ts";
import { acceptHeld, holdForAddress, openShipment } from "./shipment-intake.ts";
import type { ShipmentDeps } from "./shipment-transitions.ts";
import { type FulfilmentStatus, PENDING_STATUSES } from "./statuses.ts";

const DUPLICATE = "duplicate submission";

/**
 * Why a fulfilment request cannot ship to this patient, or null. Spec 3: an Invalid address
 * holds the request (Client Action Required) unless confirm_address is true; the lab also holds
 * one with no patient or an incomplete address (spec 7.3: all four fields are needed).
 */
export function addressProblem(patient: PatientRow | null): string | null {
  if (patient === null) return "no patient: a shipment needs the patient's address";
  if (!isCompleteAddress(patient)) {
    return "the patient's address is incomplete: address, city, state and zip_code are all needed";
  }
  if (patient.addressStatus === "Invalid" && !patient.confirmAddress) {
    return "the patient's address failed verification (address_status Invalid): correct it or set confirm_address";
  }
  return null;
}

export function duplicateReason(open: DeviceRow): string {
  return `${DUPLICATE}: device ${open.id} (${open.name}) is already pending for this patient`;
}

/** Accepted and not shipped yet: the statuses an address problem takes back to the client. */
const ACCEPTED = ["Ready to Ship", "On Hold"];

/** A patient whose address cannot be shipped to, and why. */
interface PatientProblem {
  readonly accountId: string;
  readonly patient: PatientRow;
  readonly problem: string;
  readonly at: Ms;
}

/**
 * Spec 3, both ways, after a patient's address changes or a request moves to another patient:
 * - "address_status Invalid → PUT/PATCH with confirm_address true → fulfilment no longer
 *   blocked": each of the patient's requests held for its address (Client Action Required, not
 *   a duplicate) whose address problem is gone is accepted — Ready to Ship, or On Hold on a
 *   stock shortage (shipment-intake.ts) — with a fulfilment event;
 * - "pending request with an Invalid address → Client Action Required": while the address has a
 *   problem, each of the patient's accepted requests not shipped yet is held again, with its
 *   event (it would otherwise ship to an address that failed verification).
 * Runs in the caller's transaction; returns the released devices. PUT hwi-devices and the
 * hwi-patients PUT and PATCH routes call it.
 */
export async function reviewRequests(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  args: { readonly accountId: string; readonly patient: PatientRow; readonly at: Ms },
): Promise<DeviceRow[]> {
  const { accountId, patient, at } = args;
  const problem = addressProblem(patient);
  if (problem !== null) {
    await holdAccepted(tx, events, deps, { ...args, problem });
    await holdOrphanedDuplicates(tx, events, deps, { ...args, problem });
    return [];
  }
  const { rows } = await tx.devices.list(accountId, {
    patientExternalId: patient.externalId,
    status: "Client Action Required",
  });
  const released: DeviceRow[] = [];
  for (const held of rows) {
    const request = fulfilmentRequestOf(held.metaData);
    if (held.hardwareUuid !== null || request === null) continue;
    // A duplicate stays one while an earlier request of its type is pending; once that one is
    // gone (cancelled), the earliest left is the patient's request and goes ahead.
    if (request.reason?.startsWith(DUPLICATE) && (await pendingBefore(tx, patient, held))) {
      continue;
    }
    await tx.devices.update(accountId, held.id, {
      metaData: withFulfilmentRequest({ ...request, reason: null }, held.metaData),
    });
    const shipment = await tx.shipments.get(held.id);
    if (shipment === null) {
      const opened = await openShipment(tx, events, deps, {
        accountId,
        id: held.id,
        kind: "device",
        deviceId: held.id,
        heldFor: null,
        requireSignature: held.requireSignature,
        shipGatewayOnly: held.shipGatewayOnly,
        deliveryType: request.delivery_type,
        at,
      });
      await announceOpened(tx, events, opened, patient, at);
    } else {
      await acceptHeld(tx, events, deps, shipment, at);
    }
    released.push((await tx.devices.get(accountId, held.id))!);
  }
  return released;
}

/** Whether an earlier request of the same device type is pending for the patient. */
async function pendingBefore(
  tx: StoreRepositories,
  patient: PatientRow,
  device: DeviceRow,
): Promise<boolean> {
  const { rows } = await tx.devices.list(device.accountId, {
    patientExternalId: patient.externalId,
    status: PENDING_STATUSES,
  });
  return rows.some(
    (d) =>
      d.id !== device.id &&
      d.name === device.name &&
      d.hardwareUuid === null &&
      (d.created < device.created || (d.created === device.created && d.id < device.id)),
  );
}

/**
 * Duplicates whose earlier request is gone wait for the address instead (no duplicate clean-up
 * cancels them): the earliest is the patient's request now.
 */
async function holdOrphanedDuplicates(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  args: PatientProblem,
): Promise<void> {
  const { accountId, patient, problem, at } = args;
  const { rows } = await tx.devices.list(accountId, {
    patientExternalId: patient.externalId,
    status: "Client Action Required",
  });
  for (const held of rows) {
    const request = fulfilmentRequestOf(held.metaData);
    if (held.hardwareUuid !== null || !request?.reason?.startsWith(DUPLICATE)) continue;
    if (await pendingBefore(tx, patient, held)) continue;
    const shipment = await tx.shipments.get(held.id);
    if (shipment === null || shipment.halted !== null) continue;
    await hold(tx, events, deps, { device: held, shipment, problem, at });
  }
}

async function holdAccepted(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  args: PatientProblem,
): Promise<void> {
  const { rows } = await tx.devices.list(args.accountId, {
    patientExternalId: args.patient.externalId,
  });
  await holdRequests(tx, events, deps, { ...args, devices: rows });
}

/**
 * Spec 3: devices whose patient was taken away (PUT hwi-devices `"patient": null`, or the
 * patient deleted) have no address to ship to: their accepted, unshipped requests wait for the
 * client (Client Action Required) until a patient is attached. In the caller's transaction.
 */
export async function holdPatientless(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  args: { readonly accountId: string; readonly deviceIds: readonly string[]; readonly at: Ms },
): Promise<void> {
  const devices: DeviceRow[] = [];
  for (const id of args.deviceIds) {
    const device = await tx.devices.get(args.accountId, id);
    if (device !== null && device.patientId === null) devices.push(device);
  }
  const problem = addressProblem(null)!;
  await holdRequests(tx, events, deps, { ...args, devices, problem });
}

/** The devices' accepted requests not shipped yet go to Client Action Required for `problem`. */
async function holdRequests(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  args: {
    readonly accountId: string;
    readonly devices: readonly DeviceRow[];
    readonly problem: string;
    readonly at: Ms;
  },
): Promise<void> {
  const { problem, at } = args;
  for (const device of args.devices) {
    const request = fulfilmentRequestOf(device.metaData);
    if (device.hardwareUuid !== null || request === null) continue;
    const shipment = await tx.shipments.get(device.id);
    if (shipment === null || shipment.kind !== "device" || shipment.halted !== null) continue;
    if (!ACCEPTED.includes(shipment.status)) continue;
    await hold(tx, events, deps, { device, shipment, problem, at });
  }
}

/** One request to Client Action Required for `problem`: its reason, its shipment, its event. */
async function hold(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  args: {
    readonly device: DeviceRow;
    readonly shipment: ShipmentRow;
    readonly problem: string;
    readonly at: Ms;
  },
): Promise<void> {
  const { device, shipment, problem, at } = args;
  const request = fulfilmentRequestOf(device.metaData)!;
  await tx.devices.update(device.accountId, device.id, {
    metaData: withFulfilmentRequest({ ...request, reason: problem }, device.metaData),
  });
  await holdForAddress(tx, events, deps, shipment, problem, at);
}

/** A request that had no shipment yet (a store from before shipments) takes its status. */
async function announceOpened(
  tx: StoreRepositories,
  events: PendingEvents,
  shipment: ShipmentRow,
  patient: PatientRow,
  at: Ms,
): Promise<void> {
  const device = await tx.devices.update(shipment.accountId, shipment.deviceId, {
    status: shipment.status,
  });
  events.add("fulfilment.status", {
    accountId: shipment.accountId,
    device,
    patientExternalId: patient.externalId,
    status: shipment.status as FulfilmentStatus,
    previousHardwareUuid: null,
    reason: null,
    trackingLink: null,
    at,
  });
}
