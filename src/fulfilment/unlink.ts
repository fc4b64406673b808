import { RpmlabError } from "../core/errors.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceRow, HardwareChange } from "../store/types.ts";
import type { ShipmentRow } from "../store/types-shipments.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import type { PendingEvents } from "./events.ts";
import { deviceMacAddress, isUuid, normalizeGatewayUuid, normalizeImei } from "./identifiers.ts";
import { successorGateway } from "./replaced-gateway.ts";
import { stopForUnlink } from "./shipment-intake.ts";

/** Which id the caller gave (wire-formats "Unlink": say in the response which was unlinked). */
export type UnlinkForm = "hwi_device_id" | "gateway_id" | "imei";

export interface UnlinkedDevice {
  /** The device after the unlink: hardware_uuid null, status Unlinked. */
  readonly device: DeviceRow;
  readonly previousHardwareUuid: string | null;
}

export interface UnlinkResult {
  readonly by: UnlinkForm;
  /** The id in canonical form (gateway ids upper case without hyphens). */
  readonly id: string;
  /** Devices this call unlinked; empty when everything was unlinked already (idempotent). */
  readonly devices: readonly UnlinkedDevice[];
  /**
   * Nothing to unlink on a gateway a replacement took over from: the gateway its devices are on
   * now (replaced-gateway.ts), which the caller may have meant. Absent otherwise.
   */
  readonly replacedBy?: string;
}

const UNLINKED = "Unlinked";

function notFound(id: string): RpmlabError {
  return new RpmlabError("E_STORE_NOT_FOUND", `nothing to unlink: ${id} not found`, { id });
}

/**
 * unlink-gateway/{id}/ (spec 4.2, 3, 6.2; wire-formats "Unlink"). The id is an hwi_device_id
 * (a UUID: that device), a gateway id (12 hex, hyphens and case ignored: every device of the
 * gateway) or an IMEI (15 digits: the direct-cellular device on it). Every affected device loses
 * its hardware_uuid (null) and becomes Unlinked, the change is logged with the prior uuid, its
 * whitelist entry leaves the gateway, its billing stops (spec 4.2: "so that billing for inactive
 * devices stops") and a shipment still on its way stops moving; a fulfilment event with
 * device_id = prior uuid fires.
 *
 * Repeating an unlink succeeds and changes nothing (clients retry until they see a 2xx). The
 * gateway stays associated with the account (gateway-info still answers; its hardware can take
 * new devices). Not found: an unknown device id, or a gateway id or IMEI that is neither
 * associated with the account, nor carrying one of its devices, nor unlinked from one before.
 */
export class Unlink {
  constructor(private readonly deps: DeviceServiceDeps) {}

  async unlink(accountId: string, rawId: string): Promise<UnlinkResult> {
    const raw = rawId.trim();
    if (isUuid(raw)) return this.byDevice(accountId, raw.toLowerCase());
    const gateway = normalizeGatewayUuid(raw);
    if (gateway !== null) return this.byHardware(accountId, "gateway_id", gateway);
    const imei = normalizeImei(raw);
    if (imei !== null) return this.byHardware(accountId, "imei", imei);
    throw notFound(raw);
  }

  private async byDevice(accountId: string, id: string): Promise<UnlinkResult> {
    const current = await this.deps.store.devices.get(accountId, id);
    if (current === null) throw notFound(id);
    if (current.status === UNLINKED && current.hardwareUuid === null) {
      return { by: "hwi_device_id", id, devices: [] };
    }
    const devices = await atomically(this.deps, async (tx, events) => {
      // Read again in the transaction: its box may have shipped since (hardware assigned at
      // Dropshipped), and that hardware is what the unlink takes away (spec 3: null after).
      // An unlink of it that ran meanwhile (a client's retry) leaves nothing to do, as above.
      const device = (await tx.devices.get(accountId, id)) ?? current;
      if (device.status === UNLINKED && device.hardwareUuid === null) return [];
      let change: HardwareChange;
      if (device.hardwareUuid === null) {
        // A request that never got hardware: nothing to log, but it stops (and bills) no more.
        const updated = await tx.devices.update(accountId, id, { status: UNLINKED });
        change = { device: updated, previousHardwareUuid: null };
      } else {
        change = (await tx.devices.unlinkDevice(accountId, id, { status: UNLINKED }))!;
        await this.forget(tx, events, change.previousHardwareUuid!, [id]);
      }
      await stopForUnlink(tx, events, { accountId, deviceIds: [id], at: this.deps.clock.now() });
      await this.announce(tx, events, accountId, [change]);
      return [change];
    });
    return { by: "hwi_device_id", id, devices };
  }

  private async byHardware(
    accountId: string,
    by: "gateway_id" | "imei",
    uuid: string,
  ): Promise<UnlinkResult> {
    const { store } = this.deps;
    const { rows } = await store.devices.list(
      accountId,
      { hardwareUuidIexact: uuid },
      { limit: 1 },
    );
    if (rows.length === 0) {
      const associated =
        by === "gateway_id" && (await store.gateways.getForAccount(accountId, uuid)) !== null;
      // Unlinked here before (a retry whose first answer was lost): a 200 that unlinks nothing,
      // also for hardware the account never had associated (devices waiting for their gateway).
      const known =
        associated ||
        (
          await store.hardwareLogs.list(
            accountId,
            { previousHardwareUuid: uuid, reason: "unlink" },
            { limit: 1 },
          )
        ).rows.length > 0;
      if (!known) throw notFound(uuid);
      // Replaced, not unlinked: its devices moved on (spec 4.3) and are still linked there.
      const successor = by === "gateway_id" ? await successorGateway(store, accountId, uuid) : null;
      return {
        by,
        id: uuid,
        devices: [],
        ...(successor === null ? {} : { replacedBy: successor }),
      };
    }
    const devices = await atomically(this.deps, async (tx, events) => {
      const changes = await tx.devices.unlinkGateway(accountId, uuid, { status: UNLINKED });
      if (by === "gateway_id") {
        const all = await tx.whitelist.list(uuid);
        await this.forget(
          tx,
          events,
          uuid,
          [],
          all.map((e) => e.macAddress),
        );
      }
      await stopForUnlink(tx, events, {
        accountId,
        deviceIds: changes.map((c) => c.device.id),
        at: this.deps.clock.now(),
      });
      await this.announce(tx, events, accountId, changes);
      return changes;
    });
    return { by, id: uuid, devices };
  }

  /** Spec 2.3: the unlinked devices leave the gateway's whitelist. */
  private async forget(
    tx: StoreRepositories,
    events: PendingEvents,
    gatewayUuid: string,
    deviceIds: readonly string[],
    macs: readonly string[] = deviceIds.map(deviceMacAddress),
  ): Promise<void> {
    const removed: string[] = [];
    for (const mac of macs) if (await tx.whitelist.remove(gatewayUuid, mac)) removed.push(mac);
    if (removed.length > 0) {
      events.add("whitelist.changed", {
        gatewayUuid,
        added: [],
        removed,
        at: this.deps.clock.now(),
      });
    }
  }

  /**
   * Spec 6.2: an Unlinked fulfilment event per device, device_id = the prior hardware uuid, and
   * the tracking link of its last box that shipped (lastTrackingLink).
   */
  private async announce(
    tx: StoreRepositories,
    events: PendingEvents,
    accountId: string,
    changes: readonly HardwareChange[],
  ): Promise<void> {
    const at = this.deps.clock.now();
    const replacements =
      changes.length === 0
        ? []
        : (await tx.shipments.list({ accountId, kind: "replacement" })).rows;
    for (const change of changes) {
      const { device, previousHardwareUuid } = change;
      const patient =
        device.patientId === null ? null : await tx.patients.getById(accountId, device.patientId);
      events.add("fulfilment.status", {
        accountId,
        device,
        patientExternalId: patient?.externalId ?? null,
        status: UNLINKED,
        previousHardwareUuid,
        reason: null,
        trackingLink: await lastTrackingLink(tx, accountId, change, replacements),
        at,
      });
    }
  }
}

/**
 * wire-formats "Fulfilment webhook": tracking_link as the device's other statuses carry it: the
 * link of its last box that shipped — its own request's, a replacement's of it, or the
 * replacement that brought the gateway (or IMEI) it is unlinked from, whose link its Replaced
 * webhook carried (a box stopped on its way by this unlink included); null when none shipped
 * (hardware in hand). `replacements`: the account's replacement shipments.
 */
async function lastTrackingLink(
  tx: StoreRepositories,
  accountId: string,
  change: HardwareChange,
  replacements: readonly ShipmentRow[],
): Promise<string | null> {
  const { device, previousHardwareUuid } = change;
  const { rows } = await tx.replacements.list(accountId, { deviceId: device.id });
  const own = [device.id, ...rows.map((r) => r.id)];
  const boxes: ShipmentRow[] = [];
  for (const id of own) {
    const shipment = await tx.shipments.get(id);
    if (shipment?.accountId === accountId) boxes.push(shipment);
  }
  const prior = previousHardwareUuid?.toUpperCase();
  if (prior !== undefined) {
    boxes.push(...replacements.filter((s) => s.hardwareUuid?.toUpperCase() === prior));
  }
  let link: string | null = null;
  let latest = Number.NEGATIVE_INFINITY;
  for (const box of boxes) {
    if (box.trackingLink === null) continue;
    const shippedOn = box.shippedOn ?? Number.NEGATIVE_INFINITY;
    if (shippedOn >= latest) {
      latest = shippedOn;
      link = box.trackingLink;
    }
  }
  return link;
}
