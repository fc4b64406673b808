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
 * an open one): a replacement never stops or restarts it. Returns the candidates in use now.
 * `boxes` is the delivery's own (AccountBoxes of `delivered`), shared with the caller so the
 * account's boxes are read once per delivery.
 */
export async function startBilling(
  tx: StoreRepositories,
  boxes: AccountBoxes,
  delivered: ShipmentRow,
  via: "doorstep" | "pickup",
  at: Ms,
): Promise<DeviceRow[]> {
  const { accountId } = delivered;
  const candidates = [delivered.deviceId];
  if (delivered.shipsGateway === true && delivered.hardwareUuid !== null) {
    const { rows } = await tx.devices.list(accountId, {
      hardwareUuidIexact: delivered.hardwareUuid,
    });
    candidates.push(...rows.map((d) => d.id).filter((id) => id !== delivered.deviceId));
  }
  const inUse: DeviceRow[] = [];
  for (const id of candidates) {
    const device = await tx.devices.get(accountId, id);
    if (device === null || !(await boxes.deviceHere(device))) continue;
    if (!(await boxes.hardwareHere(device.hardwareUuid))) continue;
    await tx.billingPeriods.open(accountId, id, at, via === "pickup" ? "pickup" : "delivery");
    const { patient: _patient, ...row } = device;
    inUse.push(row);
  }
  return inUse;
}

/**
 * What reached the patient, as the account's boxes say. The box just delivered answers the
 * usual case (a request with its device and gateway); the account's other boxes are read only
 * when a device or gateway came in another one, once per delivery.
 */
export class AccountBoxes {
  private all: Promise<readonly ShipmentRow[]> | undefined;

  constructor(
    private readonly tx: StoreRepositories,
    private readonly accountId: string,
    /** The box just delivered or collected; null at an activation. */
    private readonly delivered: ShipmentRow | null = null,
  ) {}

  /**
   * The device itself is with the patient: activated on hardware in hand (no request of its
   * own), with ship_gateway_only (spec 2.4: the patient has it, only a gateway ships), or its
   * own box or a replacement carrying it reached the patient (delivered or collected).
   */
  async deviceHere(device: DeviceRow): Promise<boolean> {
    const d = this.delivered;
    if (d?.deviceId === device.id && d.shipsDevice === true) return true;
    const own = await this.tx.shipments.get(device.id);
    if (own === null || own.kind !== "device") return true;
    if (own.shipGatewayOnly || own.deliveredOn !== null) return true;
    return (await this.shipments()).some(
      (s) =>
        s.kind === "replacement" &&
        s.deviceId === device.id &&
        s.shipsDevice === true &&
        s.deliveredOn !== null,
    );
  }

  /**
   * The hardware a device reports through is with the patient: no box that shipped it as a
   * gateway is still with the carrier (on its way, or held at a facility and not collected).
   * A gateway the lab never shipped was in hand, as is a direct-cellular device's own IMEI (no
   * gateway row); a box an unlink stopped moves no more (shipment-intake.ts). Null (unlinked):
   * nothing.
   */
  async hardwareHere(uuid: string | null): Promise<boolean> {
    if (uuid === null) return false;
    const d = this.delivered;
    if (d?.shipsGateway === true && d.hardwareUuid === uuid) return true;
    const gateway = await this.tx.gateways.get(uuid);
    if (gateway === null || gateway.shippedOn === null) return true;
    return !(await this.shipments()).some(
      (s) =>
        s.shipsGateway === true &&
        s.hardwareUuid === uuid &&
        s.deliveredOn === null &&
        s.halted === null,
    );
  }

  private shipments(): Promise<readonly ShipmentRow[]> {
    this.all ??= this.tx.shipments.list({ accountId: this.accountId }).then(({ rows }) => rows);
    return this.all;
  }
}
