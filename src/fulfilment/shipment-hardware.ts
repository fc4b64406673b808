import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Profile } from "../catalogue/schema.ts";
import { isRpmlabError } from "../core/errors.ts";
import { fieldError } from "../core/field-errors.ts";
import type { Rng } from "../core/rng.ts";
import { WHITELIST_MAX } from "../mqtt/envelope.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceRow, HardwareChange, Ms } from "../store/types.ts";
import type { ReplacementRow, WhitelistRow } from "../store/types-hardware.ts";
import type { PendingEvents } from "./events.ts";
import { slotTaken } from "./gateway-slots.ts";
import { bindHardware, gatewayOwnedElsewhere } from "./hardware-binding.ts";
import {
  deviceMacAddress,
  drawGatewayUuid,
  drawImei,
  normalizeGatewayUuid,
  normalizeImei,
} from "./identifiers.ts";
import { GATEWAY } from "./replacement-waits.ts";
import { whitelistFullMessage, whitelistUse } from "./whitelist-room.ts";

/** What left the warehouse when an order shipped (Dropshipped). */
export interface ShippedHardware {
  /** The gateway id or IMEI the order's device(s) now carry; null when none changed. */
  readonly hardwareUuid: string | null;
  readonly shipsDevice: boolean;
  readonly shipsGateway: boolean;
  /** Devices whose hardware_uuid moved (replacement of a gateway or of an IMEI device). */
  readonly changes: readonly HardwareChange[];
}

/**
 * A device request ships (spec 2.2 "shipped_on: set when the gateway was dropshipped"; 2.4
 * ship_gateway_only). What is in the box:
 * - a direct-cellular device: the device, with a new IMEI;
 * - ship_gateway_only: a new gateway only (the patient has the device; only the gateway is
 *   billed);
 * - a gateway device: the device, and a new gateway unless the patient already has one of the
 *   account's gateways with this device's slot free, which the device then joins.
 * A new gateway is associated with the account and gets shipped_on; the device takes the
 * hardware (logged, reason "shipment"), is whitelisted there (RE) and inherits orphan readings.
 * `imposed` ships that gateway id or IMEI instead of drawing one (a scenario's own gateway).
 */
export async function shipRequestHardware(
  tx: StoreRepositories,
  events: PendingEvents,
  args: {
    readonly catalogue: Catalogue;
    readonly device: DeviceRow;
    readonly patientExternalId: string | null;
    readonly rng: Rng;
    readonly at: Ms;
    readonly imposed?: string | undefined;
  },
): Promise<ShippedHardware> {
  const { device, at } = args;
  const profile = args.catalogue.get(device.name);
  const kind = profile.identity === "imei" ? "imei" : "gateway";
  const imposed = args.imposed === undefined ? undefined : imposedId(kind, args.imposed);
  const reused =
    kind !== "gateway"
      ? null
      : imposed !== undefined
        ? await gatewayOutThere(tx, device, imposed)
        : device.shipGatewayOnly
          ? null
          : await patientGateway(tx, device, profile);
  const hardwareUuid = reused ?? imposed ?? (await freeId(tx, kind, args.rng.fork("hardware")));
  const shipsGateway = kind === "gateway" && reused === null;
  if (imposed !== undefined) {
    // A slot the admin's gateway or IMEI has taken is refused naming the device in it (the
    // store's conflict below could only name this one), before anything is written.
    const taken = await slotTaken(tx, {
      accountId: device.accountId,
      profile,
      hardwareUuid,
      sensorId: device.sensorId,
      exceptDeviceId: device.id,
    });
    if (taken !== null) throw fieldError("hardware_uuid", taken.message);
    // As an activation on it would be (whitelist-room.ts): a 65th device could never be sent.
    const used = kind === "gateway" ? await whitelistUse(tx, hardwareUuid, device.accountId) : 0;
    if (used >= WHITELIST_MAX) {
      throw fieldError("hardware_uuid", whitelistFullMessage(hardwareUuid, used));
    }
  }
  if (shipsGateway) await shipGateway(tx, device.accountId, hardwareUuid, at);
  try {
    const moved = await tx.devices.update(
      device.accountId,
      device.id,
      { hardwareUuid },
      { reason: "shipment" },
    );
    await bindHardware(tx, events, {
      device: moved,
      profile,
      patientExternalId: args.patientExternalId,
      at,
    });
  } catch (error) {
    if (!isRpmlabError(error, "E_STORE_CONFLICT")) throw error;
    throw fieldError(
      "hardware_uuid",
      `${hardwareUuid} already carries a ${device.name} (one per sensor code per gateway, spec 2.8).`,
    );
  }
  return { hardwareUuid, shipsDevice: !device.shipGatewayOnly, shipsGateway, changes: [] };
}

/**
 * A replacement ships (spec 3 "gateway replaced → Replaced", 4.3). With "Gateway" in
 * device_types a new gateway is associated with the account and marked shipped; every device of
 * the old gateway moves to it (logged, status Replaced, whitelisted there as RE and removed from
 * the old one) with a Replaced event each, device_id = the old gateway id (spec 6.2). A
 * direct-cellular device replaced by a new unit gets a new IMEI the same way. The Replaced
 * webhooks carry the replacement's tracking link (wire-formats: "sends a fulfilment webhook when
 * shipped"). A gateway device replaced without its gateway keeps its hardware_uuid and status.
 */
export async function shipReplacementHardware(
  tx: StoreRepositories,
  events: PendingEvents,
  args: {
    readonly catalogue: Catalogue;
    readonly replacement: ReplacementRow;
    readonly rng: Rng;
    readonly at: Ms;
    readonly imposed?: string | undefined;
    /** The replacement's tracking link, carried by the Replaced webhooks. */
    readonly trackingLink: string | null;
  },
): Promise<ShippedHardware> {
  const { replacement, at } = args;
  const device = await tx.devices.get(replacement.accountId, replacement.deviceId);
  const profile = device === null ? undefined : args.catalogue.find(device.name);
  const shipsGateway = replacement.deviceTypes.includes(GATEWAY);
  const shipsDevice = replacement.deviceTypes.some((t) => t !== GATEWAY);
  const kind =
    shipsGateway && profile?.identity === "gateway"
      ? "gateway"
      : profile?.identity === "imei" && replacement.deviceTypes.includes(profile.name)
        ? "imei"
        : null;
  // What the device is on now, not when the replacement was asked for: another replacement
  // may have shipped meanwhile (spec 4.3: the devices of the gateway the box replaces move), and
  // the gateway id it had may be another patient's since (unlink halts this shipment).
  const old = device?.hardwareUuid ?? null;
  if (kind === null || old === null) {
    return { hardwareUuid: null, shipsDevice, shipsGateway, changes: [] };
  }
  if (old !== replacement.previousHardwareUuid) {
    await tx.replacements.update(replacement.accountId, replacement.id, {
      previousHardwareUuid: old,
      modified: at,
    });
  }
  const fresh =
    args.imposed !== undefined
      ? imposedId(kind, args.imposed)
      : await freeId(tx, kind, args.rng.fork("hardware"));
  if (kind === "gateway" && args.imposed !== undefined) await refuseOutThere(tx, fresh);
  if (kind === "gateway") await shipGateway(tx, replacement.accountId, fresh, at);
  let changes: HardwareChange[] = [];
  const { rows } = await tx.devices.list(
    replacement.accountId,
    { hardwareUuidIexact: old },
    { limit: 1 },
  );
  if (rows.length > 0) {
    changes = await tx.devices.replaceHardware(replacement.accountId, old, fresh, {
      status: "Replaced",
    });
    if (kind === "gateway") await moveWhitelist(tx, events, old, fresh, changes, at);
    for (const { device: moved, previousHardwareUuid } of changes) {
      const patient =
        moved.patientId === null
          ? null
          : await tx.patients.getById(moved.accountId, moved.patientId);
      events.add("fulfilment.status", {
        accountId: moved.accountId,
        device: moved,
        patientExternalId: patient?.externalId ?? null,
        status: "Replaced",
        previousHardwareUuid,
        reason: null,
        trackingLink: args.trackingLink,
        at,
      });
    }
  }
  return { hardwareUuid: fresh, shipsDevice, shipsGateway, changes };
}

/** A gateway leaving the warehouse: the account's from now on, shipped_on set (spec 2.2). */
async function shipGateway(
  tx: StoreRepositories,
  accountId: string,
  gatewayUuid: string,
  at: Ms,
): Promise<void> {
  try {
    await tx.gateways.associate(accountId, gatewayUuid, at);
  } catch (error) {
    if (isRpmlabError(error, "E_STORE_CONFLICT")) {
      const refused = gatewayOwnedElsewhere(gatewayUuid);
      throw fieldError("hardware_uuid", refused.message);
    }
    throw error;
  }
  await tx.gateways.setShipped(gatewayUuid, at);
}

/**
 * The patient's gateway a new device can join: one of the account's gateways that another
 * device of the patient is on, with this device's slot free (spec 2.8) and room on its
 * whitelist (whitelist-room.ts). Oldest device first.
 */
async function patientGateway(
  tx: StoreRepositories,
  device: DeviceRow,
  profile: Profile,
): Promise<string | null> {
  if (device.patientId === null) return null;
  const patient = await tx.patients.getById(device.accountId, device.patientId);
  if (patient === null) return null;
  const { rows } = await tx.devices.list(device.accountId, {
    patientExternalId: patient.externalId,
  });
  for (const other of rows) {
    const uuid = other.hardwareUuid;
    if (uuid === null || other.id === device.id || normalizeGatewayUuid(uuid) === null) continue;
    const gateway = await tx.gateways.get(uuid);
    if (gateway?.accountId !== device.accountId) continue;
    const taken = await tx.devices.findByHardware({
      hardwareUuid: uuid,
      sensorCode: device.sensorCode,
      ...(profile.per_gateway === "many_by_sensor_id" ? { sensorId: device.sensorId } : {}),
    });
    if (taken !== null) continue;
    // A full whitelist could never be sent with this device on it: ship a gateway instead.
    if ((await whitelistUse(tx, uuid, device.accountId)) < WHITELIST_MAX)
      return gateway.gatewayUuid;
  }
  return null;
}

/**
 * A gateway the admin named (advance's hardware_uuid) that is already out there — the lab
 * shipped it before, or devices are on it (in the patient's hands) — is not in this box: the
 * device joins it, as it joins the patient's gateway when none is named, and the gateway keeps
 * the shipped_on of its own dropshipping (spec 2.2), counted once among the hardware shipped.
 * Null: a gateway new to the field (never seen, or only in the lab's inventory), which ships.
 * Another account's is refused, as shipping it would be.
 */
async function gatewayOutThere(
  tx: StoreRepositories,
  device: DeviceRow,
  uuid: string,
): Promise<string | null> {
  const gateway = await tx.gateways.get(uuid);
  if (gateway === null) return null;
  if (gateway.accountId !== null && gateway.accountId !== device.accountId) {
    throw fieldError("hardware_uuid", gatewayOwnedElsewhere(gateway.gatewayUuid).message);
  }
  if (device.shipGatewayOnly) {
    // ship_gateway_only asks for a gateway in the box (spec 2.4): one already out there is not one.
    if (gateway.shippedOn !== null || (await onGateway(tx, uuid, device.id)) > 0) {
      throw fieldError(
        "hardware_uuid",
        `Gateway ${gateway.gatewayUuid} is already out there (shipped or in use); ship_gateway_only ships a new gateway: name one not shipped yet, or none.`,
      );
    }
    return null;
  }
  if (gateway.shippedOn === null && (await onGateway(tx, uuid, device.id)) === 0) return null;
  return gateway.gatewayUuid;
}

/**
 * A replacement's box brings a gateway new to the field: one already out there (the one it
 * replaces, or one shipped before or in use) cannot be in it, and moving the devices onto it
 * would replace nothing (spec 4.3). 400 keyed hardware_uuid, as the admin named it.
 */
async function refuseOutThere(tx: StoreRepositories, uuid: string): Promise<void> {
  const gateway = await tx.gateways.get(uuid);
  if (gateway === null) return;
  if (gateway.shippedOn !== null || (await onGateway(tx, uuid, "")) > 0) {
    throw fieldError(
      "hardware_uuid",
      `Gateway ${gateway.gatewayUuid} is already out there (shipped or in use); a replacement ships a new gateway: name one not shipped yet, or none.`,
    );
  }
}

/** How many devices other than `deviceId` are on the gateway. */
async function onGateway(tx: StoreRepositories, uuid: string, deviceId: string): Promise<number> {
  const devices = await tx.devices.findAllByHardware([uuid]);
  return devices.filter((d) => d.id !== deviceId).length;
}

function imposedId(kind: "gateway" | "imei", raw: string): string {
  const id = kind === "gateway" ? normalizeGatewayUuid(raw) : normalizeImei(raw);
  if (id === null) {
    throw fieldError(
      "hardware_uuid",
      kind === "gateway"
        ? `"${raw}" is not a gateway id: 12 hexadecimal characters (hyphens are ignored).`
        : `"${raw}" is not an IMEI: 15 digits.`,
    );
  }
  return id;
}

/** A gateway id or IMEI drawn from `rng` that no gateway row and no device uses yet. */
async function freeId(tx: StoreRepositories, kind: "gateway" | "imei", rng: Rng): Promise<string> {
  for (;;) {
    const id = kind === "gateway" ? drawGatewayUuid(rng) : drawImei(rng);
    const known = kind === "gateway" && (await tx.gateways.get(id)) !== null;
    if (!known && (await tx.devices.findAllByHardware([id])).length === 0) return id;
  }
}

/** Spec 2.3: the moved devices leave the old gateway's whitelist and join the new one's. */
async function moveWhitelist(
  tx: StoreRepositories,
  events: PendingEvents,
  old: string,
  fresh: string,
  changes: readonly HardwareChange[],
  at: Ms,
): Promise<void> {
  const removed: string[] = [];
  const added: WhitelistRow[] = [];
  for (const { device } of changes) {
    const mac = deviceMacAddress(device.id);
    if (await tx.whitelist.remove(old, mac)) removed.push(mac);
    added.push(
      await tx.whitelist.upsert(fresh, {
        macAddress: mac,
        sensorCode: device.sensorCode ?? "",
        whitelistStatus: "RE",
      }),
    );
  }
  if (removed.length > 0) {
    events.add("whitelist.changed", { gatewayUuid: old, added: [], removed, at });
  }
  events.add("whitelist.changed", { gatewayUuid: fresh, added, removed: [], at });
}
