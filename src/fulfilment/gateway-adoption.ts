import { WHITELIST_MAX } from "../mqtt/envelope.ts";
import type { DeviceRow } from "../store/types.ts";
import type { GatewayStatus, WhitelistRow } from "../store/types-hardware.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import { bindHardware } from "./hardware-binding.ts";
import { normalizeGatewayUuid } from "./identifiers.ts";
import { ACTIVE, UNKNOWN_GATEWAY } from "./statuses.ts";

export interface AdoptionResult {
  readonly gatewayUuid: string;
  /** The account the gateway now serves, or null when no device was waiting for it. */
  readonly accountId: string | null;
  /** Devices that left Unknown Gateway ID for Active. */
  readonly adopted: readonly DeviceRow[];
  /**
   * Devices of that account left waiting (Unknown Gateway ID) because the gateway's whitelist
   * was full (WHITELIST_MAX): the caller logs them; they are adopted at a later check-in once
   * devices are unlinked from the gateway.
   */
  readonly crowdedOut: readonly DeviceRow[];
}

/**
 * How a gateway id activated while unknown (status Unknown Gateway ID, wire-formats "Devices")
 * becomes associated: the first time the lab sees that gateway — its status or readings arrive
 * over MQTT, or a scenario registers it — call `adopt` (or `register`, which does both). The
 * waiting devices become Active, the gateway is associated with their account (gateway-info
 * answers), they are whitelisted (RE) and the orphan readings kept meanwhile are attached.
 *
 * A gateway serves one account: if it is already associated, only that account's devices are
 * adopted; otherwise the account of the earliest waiting device wins, and devices of any other
 * account stay Unknown Gateway ID. The whitelist holds at most WHITELIST_MAX devices (activation
 * refuses more, whitelist-room.ts, even when activations race: transactions run one at a time per
 * store; but devices activated before that rule may wait in excess): the oldest are adopted up to
 * the limit, the rest stay Unknown Gateway ID and are reported as crowdedOut, so every whitelist
 * sent still fits the downlink.
 */
export class GatewayAdoption {
  constructor(private readonly deps: DeviceServiceDeps) {}

  /** Puts a gateway in the lab's inventory (known from now on) and adopts its waiting devices. */
  async register(rawUuid: string, status: GatewayStatus = {}): Promise<AdoptionResult> {
    const gatewayUuid = this.canonical(rawUuid);
    await this.deps.store.gateways.updateStatus(gatewayUuid, status);
    return this.adopt(gatewayUuid);
  }

  async adopt(rawUuid: string): Promise<AdoptionResult> {
    return (await this.adoptAll([rawUuid]))[0]!;
  }

  /**
   * `adopt` for every gateway of an ingested batch that reported its status, one result per
   * uuid given, in order (a uuid given twice adopts once: its second result adopts none).
   */
  async adoptAll(rawUuids: readonly string[]): Promise<AdoptionResult[]> {
    const uuids = rawUuids.map((u) => this.canonical(u));
    // The devices on these gateway ids that wait for them, oldest first: one indexed lookup for
    // the batch (every gateway checks in every 15 minutes, and an account-wide list grew with
    // the fleet) that finds none at nearly every check-in, so a gateway is read only after it.
    const candidates =
      uuids.length === 0
        ? []
        : await this.deps.store.devices.findAllByHardware(uuids, UNKNOWN_GATEWAY);
    const waiting = new Map<string, DeviceRow[]>();
    for (const device of candidates) {
      const key = device.hardwareUuid!.toLowerCase();
      const list = waiting.get(key);
      if (list === undefined) waiting.set(key, [device]);
      else list.push(device);
    }
    const results: AdoptionResult[] = [];
    for (const gatewayUuid of uuids) {
      const key = gatewayUuid.toLowerCase();
      results.push(await this.adoptWaiting(gatewayUuid, waiting.get(key) ?? []));
      waiting.delete(key);
    }
    return results;
  }

  /** Adopts `candidates`, the devices that waited for this gateway, oldest first. */
  private async adoptWaiting(
    gatewayUuid: string,
    candidates: readonly DeviceRow[],
  ): Promise<AdoptionResult> {
    const { store } = this.deps;
    const none = { gatewayUuid, accountId: null, adopted: [], crowdedOut: [] };
    if (candidates.length === 0) return none;
    const gateway = await store.gateways.get(gatewayUuid);
    if (gateway === null) return none;
    const waiting = candidates.filter(
      (d) => gateway.accountId === null || d.accountId === gateway.accountId,
    );
    if (waiting.length === 0) return none;
    const accountId = gateway.accountId ?? waiting[0]!.accountId;
    const mine = waiting.filter((d) => d.accountId === accountId);
    const { adopted, crowdedOut } = await atomically(this.deps, async (tx, events) => {
      const at = this.deps.clock.now();
      const room = Math.max(0, WHITELIST_MAX - (await tx.whitelist.list(gatewayUuid)).length);
      const out: DeviceRow[] = [];
      for (const waitingDevice of mine.slice(0, room)) {
        const profile = this.deps.catalogue.get(waitingDevice.name);
        const device = await tx.devices.update(accountId, waitingDevice.id, { status: ACTIVE });
        // Billing starts now that the gateway is known and the device on its whitelist (README
        // "Billing"): while it waited, nothing behind that gateway id was known to be in use.
        await tx.billingPeriods.open(accountId, device.id, at, "activation");
        const patient =
          device.patientId === null ? null : await tx.patients.getById(accountId, device.patientId);
        const patientExternalId = patient?.externalId ?? null;
        const binding = await bindHardware(tx, events, { device, profile, patientExternalId, at });
        events.add("device.activated", {
          accountId,
          device,
          patientExternalId,
          gatewayKnown: true,
          orphansAttached: binding.orphansAttached,
          at,
        });
        out.push(device);
      }
      return { adopted: out, crowdedOut: mine.slice(room) };
    });
    return { gatewayUuid, accountId, adopted, crowdedOut };
  }

  /** Spec 2.3: the gateway confirmed a whitelisted device (RE → CO). Null when not listed. */
  async confirmWhitelisted(rawUuid: string, macAddress: string): Promise<WhitelistRow | null> {
    const gatewayUuid = this.canonical(rawUuid);
    const entries = await this.deps.store.whitelist.list(gatewayUuid);
    const entry = entries.find((e) => e.macAddress.toUpperCase() === macAddress.toUpperCase());
    if (entry === undefined) return null;
    return this.deps.store.whitelist.upsert(gatewayUuid, {
      macAddress: entry.macAddress,
      sensorCode: entry.sensorCode,
      whitelistStatus: "CO",
    });
  }

  private canonical(rawUuid: string): string {
    return normalizeGatewayUuid(rawUuid) ?? rawUuid.trim().toUpperCase();
  }
}
