import type { Profile } from "../catalogue/schema.ts";
import type { FieldErrorCollector } from "../core/field-errors.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceRow } from "../store/types.ts";

/**
 * Spec 2.8, "unless noted, only one device with a given sensor code can be assigned to a
 * gateway", as the lab applies it to each profile's per_gateway rule. The store holds one device
 * per (hardware uuid, sensor code, sensor id) slot; these rules decide what goes in the slot:
 *
 * - one_per_sensor_code: the slot is the sensor code; a second device with that code on the
 *   gateway is refused, whatever its type (the four BPM cuffs share code 10, so one BPM per
 *   gateway).
 * - many_by_sensor_id (inhaler): the slot is the sensor code and the sensor id (required), so
 *   inhalers share a gateway as long as their serial numbers differ.
 * - many_with_distinct_sensor_codes (medication cap): "several devices with different sensor
 *   codes per gateway". A gateway takes several medication caps only when their sensor codes
 *   differ; the slot is the sensor code, as for one_per_sensor_code. The catalogue has one
 *   medication cap type, with the one code 27, so today a gateway holds one medication cap (next
 *   to devices of any other code); a cap profile with another code would share the gateway.
 *   The lab never invents sensor codes: ingestion tells devices apart by the code the gateway
 *   relays.
 * - none (direct-cellular): the slot is the IMEI; one device per IMEI.
 *
 * Checked across accounts, as the store's unique index is: a physical gateway is in one place.
 */
export async function checkSlotFree(
  repos: StoreRepositories,
  errors: FieldErrorCollector,
  args: {
    readonly accountId: string;
    readonly profile: Profile;
    readonly hardwareUuid: string;
    readonly sensorId: string | null;
    /** The device being moved, which may keep its own slot. */
    readonly exceptDeviceId?: string;
  },
): Promise<void> {
  const taken = await slotTaken(repos, args);
  if (taken !== null) errors.add(taken.field, taken.message);
}

/** Why the slot is not free (the field the activation keys it by, and the message), or null. */
export async function slotTaken(
  repos: StoreRepositories,
  args: SlotArgs & { readonly exceptDeviceId?: string },
): Promise<{ field: string[]; message: string } | null> {
  const occupant = await repos.devices.findByHardware({
    hardwareUuid: args.hardwareUuid,
    sensorCode: args.profile.sensor_code,
    sensorId: args.sensorId,
  });
  if (occupant === null || occupant.id === args.exceptDeviceId) return null;
  return slotMessage(args, occupant);
}

interface SlotArgs {
  readonly accountId: string;
  readonly profile: Profile;
  readonly hardwareUuid: string;
  readonly sensorId: string | null;
}

function slotMessage(args: SlotArgs, occupant: DeviceRow): { field: string[]; message: string } {
  const { profile, hardwareUuid } = args;
  const who =
    occupant.accountId === args.accountId
      ? `${occupant.name}, hwi_device_id ${occupant.id}`
      : "a device of another account";
  switch (profile.per_gateway) {
    case "none":
      return {
        field: ["device", "hardware_uuid"],
        message: `IMEI ${hardwareUuid} is already the hardware of another device (${who}); one device per IMEI.`,
      };
    case "many_by_sensor_id":
      return {
        field: ["sensor_id"],
        message: `Gateway ${hardwareUuid} already has a ${profile.name} with sensor id ${args.sensorId} (${who}); devices of this type share a gateway only with different sensor ids (spec 2.8).`,
      };
    case "many_with_distinct_sensor_codes":
      return {
        field: ["device", "hardware_uuid"],
        message: `Gateway ${hardwareUuid} already has a device with sensor code ${profile.sensor_code} (${who}). Several ${profile.name} devices share a gateway only when their sensor codes differ (spec 2.8), and ${profile.name} has the one sensor code ${profile.sensor_code}.`,
      };
    case "one_per_sensor_code":
      return {
        field: ["device", "hardware_uuid"],
        message: `Gateway ${hardwareUuid} already has a device with sensor code ${profile.sensor_code} (${who}); only one device per sensor code can be assigned to a gateway (spec 2.8).`,
      };
  }
}
