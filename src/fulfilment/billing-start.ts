import type { StoreRepositories } from "../store/store.ts";
import type { DeviceRow, Ms } from "../store/types.ts";
import type { ShipmentRow } from "../store/types-shipments.ts";

/**
 * A delivery (or a pickup) starts billing for the devices it puts to use (README "Billing"): a
 * device is billable once it and the gateway it is on are both with the patient. A device
 * without its gateway sends no readings (spec 1.1: through a gateway unless direct-cellular), so
 * a box's delivery starts its own device only if that device's gateway is here too, and a box
 * bringing a gateway starts the devices on it that were waiting for it: a device that joined
 * the patient's gateway while that gateway was still in the mail (or held at a facility), or
 * that a replacement gateway carries. A device billing already keeps its period (open() keeps
 * an open one): a replacement never stops or restarts it.
 */
export async function startBilling(
  tx: StoreRepositories,
  delivered: ShipmentRow,
  via: "doorstep" | "pickup",
  at: Ms,
): Promise<void> {
  const { accountId } = delivered;
  const { rows: shipments } = await tx.shipments.list({ accountId });
  const candidates = [delivered.deviceId];
  if (delivered.shipsGateway === true && delivered.hardwareUuid !== null) {
    const { rows } = await tx.devices.list(accountId, {
      hardwareUuidIexact: delivered.hardwareUuid,
    });
    candidates.push(...rows.map((d) => d.id).filter((id) => id !== delivered.deviceId));
  }
  for (const id of candidates) {
    const device = await tx.devices.get(accountId, id);
    if (device === null || !deviceHere(device, shipments) || !gatewayHere(device, shipments)) {
      continue;
    }
    await tx.billingPeriods.open(accountId, id, at, via === "pickup" ? "pickup" : "delivery");
  }
}

/**
 * The device itself is with the patient: activated on hardware in hand (no request of its own),
 * with ship_gateway_only (spec 2.4: the patient has it, only a gateway ships), or its own box or
 * a replacement carrying it reached the patient (delivered or collected).
 */
function deviceHere(device: DeviceRow, shipments: readonly ShipmentRow[]): boolean {
  const own = shipments.find((s) => s.kind === "device" && s.id === device.id);
  if (own === undefined || own.shipGatewayOnly || own.deliveredOn !== null) return true;
  return shipments.some(
    (s) =>
      s.kind === "replacement" &&
      s.deviceId === device.id &&
      s.shipsDevice === true &&
      s.deliveredOn !== null,
  );
}

/**
 * The hardware the device reports through is with the patient: a box that shipped it as a
 * gateway reached the patient, or none did (a gateway in hand at activation, or a direct-
 * cellular device's own IMEI, which no box ships as a gateway). Unlinked: nothing.
 */
function gatewayHere(device: DeviceRow, shipments: readonly ShipmentRow[]): boolean {
  const uuid = device.hardwareUuid;
  if (uuid === null) return false;
  const boxes = shipments.filter((s) => s.shipsGateway === true && s.hardwareUuid === uuid);
  return boxes.length === 0 || boxes.some((s) => s.deliveredOn !== null);
}
