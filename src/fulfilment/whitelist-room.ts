import type { Profile } from "../catalogue/schema.ts";
import type { FieldErrorCollector } from "../core/field-errors.ts";
import { WHITELIST_MAX } from "../mqtt/envelope.ts";
import type { StoreRepositories } from "../store/store.ts";
import { deviceMacAddress } from "./identifiers.ts";

/**
 * How many whitelist entries a gateway has, or will have once it is adopted: the entries the
 * store holds for it, and the devices of the account it serves (or would serve) that wait for it
 * in Unknown Gateway ID. Every device on a gateway takes an entry of its own, so inhalers told
 * apart by sensor id (many_by_sensor_id) each take one though they share a sensor code slot.
 */
export async function whitelistUse(
  repos: StoreRepositories,
  gatewayUuid: string,
  accountId: string,
): Promise<number> {
  const gateway = await repos.gateways.get(gatewayUuid);
  const owner = gateway?.accountId ?? accountId;
  const macs = new Set<string>();
  if (gateway !== null) {
    for (const entry of await repos.whitelist.list(gatewayUuid)) macs.add(entry.macAddress);
  }
  for (const device of await repos.devices.findAllByHardware([gatewayUuid])) {
    if (device.accountId === owner) macs.add(deviceMacAddress(device.id));
  }
  return macs.size;
}

/**
 * The whitelist downlink lists at most WHITELIST_MAX devices (src/mqtt/schema): a device past it
 * could never be sent to the gateway (every whitelist downlink would fail), so its activation is
 * refused, keyed device.hardware_uuid, naming the limit.
 */
export async function checkWhitelistRoom(
  repos: StoreRepositories,
  errors: FieldErrorCollector,
  args: { readonly accountId: string; readonly profile: Profile; readonly hardwareUuid: string },
): Promise<void> {
  if (args.profile.identity !== "gateway") return;
  const used = await whitelistUse(repos, args.hardwareUuid, args.accountId);
  if (used < WHITELIST_MAX) return;
  errors.add(["device", "hardware_uuid"], whitelistFullMessage(args.hardwareUuid, used));
}

export function whitelistFullMessage(gatewayUuid: string, used: number): string {
  return `Gateway ${gatewayUuid} already has ${used} devices, the most its whitelist holds (${WHITELIST_MAX}); unlink one of them or use another gateway.`;
}
