import { RpmlabError } from "../core/errors.ts";
import type { Store } from "../store/store.ts";
import type { HardwareChange } from "../store/types.ts";
import type { ReplacementRow } from "../store/types-hardware.ts";
import type { Orders } from "./orders.ts";
import { PENDING } from "./shipment-flow.ts";

export interface ShippedReplacement {
  readonly replacement: ReplacementRow;
  /** The new gateway id or IMEI; null when the replacement changes no hardware id. */
  readonly newHardwareUuid: string | null;
  /** Every device moved from the old hardware to the new one (status Replaced). */
  readonly changes: readonly HardwareChange[];
}

/**
 * Ships a replacement now, whatever its shipment had planned: the admin's "advance to
 * Dropshipped" (orders.ts) for code that drives the lab directly (scenarios, tests). What
 * shipping does — a new gateway for every device of the old one, Replaced events with device_id
 * = the old gateway id (spec 3, 4.3, 6.2), a new IMEI for a direct-cellular unit — is in
 * shipment-hardware.ts. `opts.hardwareUuid` ships that gateway id or IMEI (a simulated gateway
 * that already exists) instead of drawing one from the shipment's Rng.
 */
export class ReplacementShipping {
  constructor(private readonly deps: { readonly orders: Orders; readonly store: Store }) {}

  async ship(
    accountId: string,
    replacementId: string,
    opts: { readonly hardwareUuid?: string } = {},
  ): Promise<ShippedReplacement> {
    const { store } = this.deps;
    const before = await store.replacements.get(accountId, replacementId);
    if (before === null) {
      throw new RpmlabError("E_STORE_NOT_FOUND", `replacement ${replacementId} not found`, {
        id: replacementId,
      });
    }
    // An Unlinked one never shipped: the advance below says why it no longer moves.
    if (
      !(PENDING as readonly (string | null)[]).includes(before.status) &&
      before.status !== "Unlinked"
    ) {
      throw new RpmlabError(
        "E_STORE_CONFLICT",
        `replacement ${replacementId} already shipped (${before.status})`,
        { id: replacementId },
      );
    }
    await this.deps.orders.advance(replacementId, {
      status: "Dropshipped",
      ...(opts.hardwareUuid === undefined ? {} : { hardware_uuid: opts.hardwareUuid }),
    });
    const replacement = (await store.replacements.get(accountId, replacementId))!;
    const fresh = replacement.newHardwareUuid;
    const old = replacement.previousHardwareUuid;
    const changes: HardwareChange[] = [];
    if (fresh !== null && old !== null) {
      const { rows } = await store.devices.list(accountId, { hardwareUuidIexact: fresh });
      const logs = (await store.hardwareLogs.list(accountId)).rows;
      for (const device of rows) {
        const moved = logs.some(
          (l) =>
            l.deviceId === device.id &&
            l.reason === "replacement" &&
            l.previousHardwareUuid === old &&
            l.hardwareUuid === fresh,
        );
        const { patient: _patient, ...row } = device;
        if (moved) changes.push({ device: row, previousHardwareUuid: old });
      }
    }
    return { replacement, newHardwareUuid: fresh, changes };
  }
}
