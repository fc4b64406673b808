import { RpmlabError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { HardwareChange } from "../store/types.ts";
import type { ReplacementRow, WhitelistRow } from "../store/types-hardware.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import type { PendingEvents } from "./events.ts";
import {
  deviceMacAddress,
  drawGatewayUuid,
  drawImei,
  normalizeGatewayUuid,
  normalizeImei,
} from "./identifiers.ts";
import { GATEWAY, REPLACEMENT_SHIPPED } from "./replacements.ts";

export interface ReplacementShippingDeps extends DeviceServiceDeps {
  /** New gateway ids and IMEIs are drawn from `rng.fork("replacement:<id>")`. */
  readonly rng: Rng;
}

export interface ShippedReplacement {
  readonly replacement: ReplacementRow;
  /** The new gateway id or IMEI; null when the replacement changes no hardware id. */
  readonly newHardwareUuid: string | null;
  /** Every device moved from the old hardware to the new one (status Replaced). */
  readonly changes: readonly HardwareChange[];
}

/**
 * The moment a replacement ships (the fulfilment simulator calls `ship`). Spec 3 / 4.3: "device
 * with gateway → gateway replaced → Replaced: hardware_uuid updated on all corresponding
 * devices; webhook fires". With "Gateway" in device_types a new gateway id is allocated,
 * associated with the account and marked shipped; every device of the old gateway moves to it
 * (logged, status Replaced, whitelisted there as RE and removed from the old one), and each gets
 * a Replaced fulfilment event with device_id = the old gateway id (spec 6.2). A direct-cellular
 * device replaced by a new unit gets a new IMEI the same way. A gateway device replaced without
 * its gateway keeps its hardware_uuid and status: only the replacement record changes.
 *
 * Ids are drawn deterministically from the Rng forked by replacement id, skipping ids the lab
 * already knows; `opts.hardwareUuid` imposes one (a simulated gateway that already exists).
 */
export class ReplacementShipping {
  constructor(private readonly deps: ReplacementShippingDeps) {}

  async ship(
    accountId: string,
    replacementId: string,
    opts: { readonly hardwareUuid?: string } = {},
  ): Promise<ShippedReplacement> {
    const { store, catalogue } = this.deps;
    const replacement = await store.replacements.get(accountId, replacementId);
    if (replacement === null) {
      throw new RpmlabError("E_STORE_NOT_FOUND", `replacement ${replacementId} not found`, {
        id: replacementId,
      });
    }
    if (replacement.status === REPLACEMENT_SHIPPED) {
      throw new RpmlabError("E_STORE_CONFLICT", `replacement ${replacementId} already shipped`, {
        id: replacementId,
      });
    }
    const device = await store.devices.get(accountId, replacement.deviceId);
    const profile = device === null ? undefined : catalogue.find(device.name);
    const kind =
      replacement.deviceTypes.includes(GATEWAY) && profile?.identity === "gateway"
        ? "gateway"
        : profile?.identity === "imei" && replacement.deviceTypes.includes(profile.name)
          ? "imei"
          : null;
    const old = replacement.previousHardwareUuid;
    const fresh =
      kind === null || old === null ? null : await this.newId(replacement, kind, opts.hardwareUuid);
    return atomically(this.deps, async (tx, events) => {
      const at = this.deps.clock.now();
      let changes: HardwareChange[] = [];
      if (fresh !== null && old !== null) {
        if (kind === "gateway") {
          await tx.gateways.associate(accountId, fresh, at);
          await tx.gateways.setShipped(fresh, at);
        }
        const { rows } = await tx.devices.list(
          accountId,
          { hardwareUuidIexact: old },
          { limit: 1 },
        );
        if (rows.length > 0) {
          changes = await tx.devices.replaceHardware(accountId, old, fresh, { status: "Replaced" });
          if (kind === "gateway") await this.moveWhitelist(tx, events, old, fresh, changes, at);
          await this.announce(tx, events, accountId, changes, at);
        }
      }
      const shipped = await tx.replacements.update(accountId, replacement.id, {
        ...(fresh === null ? {} : { newHardwareUuid: fresh }),
        status: REPLACEMENT_SHIPPED,
      });
      events.add("replacement.status", {
        accountId,
        replacement: shipped,
        status: REPLACEMENT_SHIPPED,
        at,
      });
      return { replacement: shipped, newHardwareUuid: fresh, changes };
    });
  }

  private async newId(
    replacement: ReplacementRow,
    kind: "gateway" | "imei",
    imposed: string | undefined,
  ): Promise<string> {
    if (imposed !== undefined) {
      const id = kind === "gateway" ? normalizeGatewayUuid(imposed) : normalizeImei(imposed);
      if (id === null) {
        throw new RpmlabError("E_USAGE", `"${imposed}" is not a valid ${kind} id`, {
          field: "hardwareUuid",
        });
      }
      return id;
    }
    const rng = this.deps.rng.fork(`replacement:${replacement.id}`);
    for (;;) {
      const id = kind === "gateway" ? drawGatewayUuid(rng) : drawImei(rng);
      if (await this.isFree(id)) return id;
    }
  }

  /** Not a gateway the lab knows, nor the hardware of any device (an unknown gateway id too). */
  private async isFree(id: string): Promise<boolean> {
    const { store, catalogue } = this.deps;
    if ((await store.gateways.get(id)) !== null) return false;
    const codes = new Set(catalogue.profiles.map((p) => p.sensor_code));
    for (const sensorCode of codes) {
      if ((await store.devices.findByHardware({ hardwareUuid: id, sensorCode })) !== null) {
        return false;
      }
    }
    return true;
  }

  /** Spec 2.3: the moved devices leave the old gateway's whitelist and join the new one's. */
  private async moveWhitelist(
    tx: StoreRepositories,
    events: PendingEvents,
    old: string,
    fresh: string,
    changes: readonly HardwareChange[],
    at: number,
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
    if (removed.length > 0)
      events.add("whitelist.changed", { gatewayUuid: old, added: [], removed, at });
    events.add("whitelist.changed", { gatewayUuid: fresh, added, removed: [], at });
  }

  /** Spec 6.2: a Replaced fulfilment event per device, device_id = the prior hardware uuid. */
  private async announce(
    tx: StoreRepositories,
    events: PendingEvents,
    accountId: string,
    changes: readonly HardwareChange[],
    at: number,
  ): Promise<void> {
    for (const { device, previousHardwareUuid } of changes) {
      const patient =
        device.patientId === null ? null : await tx.patients.getById(accountId, device.patientId);
      events.add("fulfilment.status", {
        accountId,
        device,
        patientExternalId: patient?.externalId ?? null,
        status: "Replaced",
        previousHardwareUuid,
        reason: null,
        trackingLink: null,
        at,
      });
    }
  }
}
