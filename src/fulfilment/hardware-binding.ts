import type { Profile } from "../catalogue/schema.ts";
import { isRpmlabError } from "../core/errors.ts";
import { fieldError } from "../core/field-errors.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceRow, Ms } from "../store/types.ts";
import type { GatewayRow } from "../store/types-hardware.ts";
import { recordStoredMeasurements } from "../webhooks/outbox.ts";
import type { PendingEvents } from "./events.ts";
import { deviceMacAddress } from "./identifiers.ts";

/**
 * What "known gateway" means in the lab: a gateway row exists, i.e. the lab has seen it — a
 * simulated or real gateway reported status or readings over MQTT, a scenario put it in the
 * lab's inventory, or it shipped (a fulfilment or a replacement). An id the lab has never seen is
 * the real service's "Unknown Gateway ID" (wire-formats "Devices").
 */
export function isKnownGateway(gateway: GatewayRow | null): gateway is GatewayRow {
  return gateway !== null;
}

export function gatewayOwnedElsewhere(gatewayUuid: string) {
  return fieldError(
    ["device", "hardware_uuid"],
    `Gateway ${gatewayUuid} is assigned to another account; a gateway serves one account (spec 4.2).`,
  );
}

export interface Binding {
  readonly gatewayKnown: boolean;
  readonly orphansAttached: number;
}

/**
 * Ties a device to the hardware it names: for a known gateway, associates the gateway with the
 * account (gateway-info answers from then on, spec 4.2) and whitelists the device as Requested
 * (spec 2.3, RE until the gateway confirms); then attaches the orphan readings kept for that
 * gateway slot or IMEI. Runs inside the caller's transaction.
 */
export async function bindHardware(
  tx: StoreRepositories,
  events: PendingEvents,
  args: {
    readonly device: DeviceRow;
    readonly profile: Profile;
    readonly patientExternalId: string | null;
    readonly at: Ms;
  },
): Promise<Binding> {
  const { device, profile, at } = args;
  const uuid = device.hardwareUuid;
  if (uuid === null) return { gatewayKnown: false, orphansAttached: 0 };
  if (profile.identity === "gateway") {
    const gateway = await tx.gateways.get(uuid);
    if (!isKnownGateway(gateway)) return { gatewayKnown: false, orphansAttached: 0 };
    try {
      await tx.gateways.associate(device.accountId, uuid, at);
    } catch (error) {
      if (isRpmlabError(error, "E_STORE_CONFLICT")) throw gatewayOwnedElsewhere(uuid);
      throw error;
    }
    const entry = await tx.whitelist.upsert(uuid, {
      macAddress: deviceMacAddress(device.id),
      sensorCode: device.sensorCode ?? "",
      whitelistStatus: "RE",
    });
    events.add("whitelist.changed", { gatewayUuid: uuid, added: [entry], removed: [], at });
  }
  const attached = await tx.measurements.attachOrphans(
    {
      hardwareUuid: uuid,
      sensorCode: device.sensorCode,
      // Inhalers share a gateway slot by sensor id: only that sensor's readings are its own.
      ...(profile.per_gateway === "many_by_sensor_id" ? { sensorId: device.sensorId } : {}),
      // An IMEI's orphans were decoded as the type their device named: only that type's.
      ...(profile.identity === "gateway" ? {} : { deviceName: profile.name }),
    },
    {
      accountId: device.accountId,
      deviceId: device.id,
      deviceName: device.name,
      patientExternalId: args.patientExternalId,
    },
  );
  // Readings kept before the activation are now the device's: its measurement webhooks get them.
  await recordStoredMeasurements(tx, attached);
  return { gatewayKnown: true, orphansAttached: attached.length };
}
