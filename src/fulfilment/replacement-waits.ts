/**
 * What a replacement waits for (spec 4.3 replaces hardware the patient has): the device's own
 * box, its gateway's, or an earlier replacement's hardware still on order or in the mail.
 */

import type { Catalogue } from "../catalogue/catalogue.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceWithPatient } from "../store/types.ts";
import { ON_THE_WAY_STATUSES, PENDING_STATUSES } from "./statuses.ts";

/** wire-formats "Replacements": the name that asks for a replacement gateway. */
export const GATEWAY = "Gateway";

/** What a replacement of the device's gateway or IMEI, or of the device itself, waits for. */
export interface Waits {
  readonly inTheMail: InTheMail | null;
  readonly onOrder: OnOrder | null;
  readonly deviceComing: DeviceComing | null;
}

export const NO_WAITS: Waits = { inTheMail: null, onOrder: null, deviceComing: null };

/** What the waits are read from: the store, or a transaction of it (a recheck, replacements.ts). */
export interface WaitsDeps {
  readonly store: StoreRepositories;
  readonly catalogue: Catalogue;
}

export async function replacementWaits(deps: WaitsDeps, device: DeviceWithPatient): Promise<Waits> {
  return {
    inTheMail: await hardwareInTheMail(deps, device),
    onOrder: await hardwareOnOrder(deps, device),
    deviceComing: await deviceComing(deps, device),
  };
}

/**
 * An earlier replacement of the device itself (device_types naming its type) not yet with the
 * patient: not shipped (Ready to Ship, On Hold) or on its way (Dropshipped … Delivery Issue),
 * or null. A second one is a duplicate order, as for a gateway (hardwareOnOrder): both boxes
 * would ship, and the patient would get two devices for one record. Once the first is delivered
 * or held for pickup (the patient may never collect it), the device can be replaced again.
 */
async function deviceComing(
  deps: WaitsDeps,
  device: DeviceWithPatient,
): Promise<DeviceComing | null> {
  const waiting = [...PENDING_STATUSES, ...ON_THE_WAY_STATUSES] as readonly (string | null)[];
  const { rows } = await deps.store.replacements.list(device.accountId, { deviceId: device.id });
  const earlier = rows.find(
    (r) => waiting.includes(r.status) && r.deviceTypes.includes(device.name),
  );
  if (earlier === undefined) return null;
  const shipped = !(PENDING_STATUSES as readonly (string | null)[]).includes(earlier.status);
  return { replacementId: earlier.id, status: earlier.status!, shipped };
}

/**
 * The box with the hardware the device is on while the carrier still has it on its way
 * (Dropshipped … Delivery Issue), or null: a replacement's new gateway (or a direct-cellular
 * device's new IMEI), or the gateway another device's request shipped, which this device
 * joined (shipment-hardware.ts: a device joins the patient's gateway, maybe still in the mail).
 * That hardware is not with the patient: a replacement of it would move the devices off
 * hardware still in the mail, as for a request whose own box is on its way (notWithPatient).
 */
async function hardwareInTheMail(
  deps: WaitsDeps,
  device: DeviceWithPatient,
): Promise<InTheMail | null> {
  if (device.hardwareUuid === null) return null;
  const { rows } = await deps.store.shipments.list({
    accountId: device.accountId,
    status: ON_THE_WAY_STATUSES,
  });
  const shipment = rows.find(
    (s) => s.hardwareUuid === device.hardwareUuid && (s.kind === "replacement" || s.shipsGateway),
  );
  return shipment === undefined
    ? null
    : {
        kind: shipment.kind,
        orderId: shipment.id,
        deviceId: shipment.deviceId,
        hardwareUuid: shipment.hardwareUuid!,
        status: shipment.status,
      };
}

/**
 * A replacement not shipped yet (Ready to Ship, On Hold) that will replace the hardware the
 * device is on: "Gateway" for a device on the same gateway (its box moves every device of it,
 * spec 4.3), or a direct-cellular device's own unit (a new IMEI), or null. A second one is a
 * duplicate order: both boxes would ship, and the second would move the devices off the
 * first's hardware, maybe still in the mail. Spec 4.3's "no duplicate-order flag" keeps a
 * replacement out of Client Action Required (no hold the client could lift), so the duplicate
 * is refused when ordered, like the hardware in the mail (hardwareInTheMail).
 */
async function hardwareOnOrder(
  deps: WaitsDeps,
  device: DeviceWithPatient,
): Promise<OnOrder | null> {
  if (device.hardwareUuid === null) return null;
  const { rows } = await deps.store.shipments.list({
    accountId: device.accountId,
    kind: "replacement",
    status: PENDING_STATUSES,
  });
  for (const shipment of rows) {
    const replacement = await deps.store.replacements.get(device.accountId, shipment.id);
    const other =
      shipment.deviceId === device.id
        ? device
        : await deps.store.devices.get(device.accountId, shipment.deviceId);
    if (replacement === null || other?.hardwareUuid !== device.hardwareUuid) continue;
    const cellular = deps.catalogue.find(other.name)?.identity === "imei";
    const newHardware = cellular
      ? replacement.deviceTypes.includes(other.name)
      : replacement.deviceTypes.includes(GATEWAY);
    if (newHardware) {
      return { replacementId: shipment.id, deviceId: other.id, status: shipment.status };
    }
  }
  return null;
}

/**
 * Why the patient does not have the device to replace (spec 4.3 replaces hardware in use), or
 * null: an unlinked device left the patient (spec 4.2), a request not shipped yet is an order
 * to cancel or wait for, and one the carrier still has on its way (its gateway too) has not
 * reached the patient: a replacement gateway shipped now would move the devices off a gateway
 * still in the mail. A package held for pickup can be replaced: the patient may never collect
 * it (README "Billing": the replacement then bills). With ship_gateway_only the patient has had
 * the device all along (spec 2.4: only a gateway ships), so the device itself can be replaced
 * whatever its order's state; only "Gateway" waits for that gateway (gatewayNotWithPatient).
 */
export function notWithPatient(device: DeviceWithPatient): string | null {
  if (device.status === "Unlinked") {
    return `Device ${device.id} is unlinked: it is no longer with a patient, there is nothing to replace.`;
  }
  if (device.shipGatewayOnly) return null;
  if ((PENDING_STATUSES as readonly string[]).includes(device.status)) {
    return `Device ${device.id} has not shipped yet (${device.status}): there is nothing to replace; cancel or wait for its order.`;
  }
  if ((ON_THE_WAY_STATUSES as readonly string[]).includes(device.status)) {
    return `Device ${device.id} has not reached the patient yet (${device.status}): there is nothing to replace; wait for its delivery.`;
  }
  return null;
}

/**
 * Why a ship_gateway_only device's gateway cannot be replaced yet, or null: its order (the
 * gateway alone) has not shipped, or is still on its way, as notWithPatient says of a whole box.
 */
export function gatewayNotWithPatient(device: DeviceWithPatient): string | null {
  if (!device.shipGatewayOnly) return null;
  const waiting = [...PENDING_STATUSES, ...ON_THE_WAY_STATUSES] as readonly string[];
  if (!waiting.includes(device.status)) return null;
  return `the gateway of device ${device.id} has not reached the patient yet (${device.status}): there is no gateway to replace; wait for its delivery.`;
}

/** The box with the hardware the device is on, while the carrier still has it. */
interface InTheMail {
  /** A replacement's box, or another device's request that shipped the gateway. */
  readonly kind: "device" | "replacement";
  /** The replacement id, or the request's (its device's hwi_device_id). */
  readonly orderId: string;
  readonly deviceId: string;
  readonly hardwareUuid: string;
  readonly status: string;
}

export function stillInTheMail(device: DeviceWithPatient, what: string, mail: InTheMail): string {
  const which =
    mail.kind === "replacement"
      ? `the replacement ${what} ${mail.hardwareUuid} of device ${device.id} (replacement ${mail.orderId})`
      : `the ${what} ${mail.hardwareUuid} of device ${device.id} (in the box of device ${mail.deviceId})`;
  return `${which} has not reached the patient yet (${mail.status}): there is nothing to replace; wait for its delivery.`;
}

/** A replacement not shipped yet that will replace the hardware the device is on. */
interface OnOrder {
  readonly replacementId: string;
  /** The device it was ordered for (another device on the same gateway, maybe). */
  readonly deviceId: string;
  readonly status: string;
}

export function alreadyOnOrder(device: DeviceWithPatient, what: string, order: OnOrder): string {
  const of = order.deviceId === device.id ? "" : ` (ordered for device ${order.deviceId})`;
  return `the ${what} ${device.hardwareUuid} of device ${device.id} is already being replaced: replacement ${order.replacementId}${of} has not shipped yet (${order.status}); a second one is a duplicate order.`;
}

/** An earlier replacement of the device itself that has not reached the patient. */
interface DeviceComing {
  readonly replacementId: string;
  readonly status: string;
  /** Dropshipped or later: in the mail; else not shipped yet. */
  readonly shipped: boolean;
}

export function deviceAlreadyComing(device: DeviceWithPatient, coming: DeviceComing): string {
  const where = coming.shipped ? "has not reached the patient yet" : "has not shipped yet";
  return `device ${device.id} (${device.name}) is already being replaced: replacement ${coming.replacementId} ${where} (${coming.status}); a second one is a duplicate order.`;
}
