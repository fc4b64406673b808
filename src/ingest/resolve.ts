import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Profile } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";
import type { UplinkReading, UplinkSource } from "../mqtt/uplink.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceRow, DeviceWithPatient } from "../store/types.ts";

/** Whose a reading is: the activated device (with its account and patient), or nobody yet. */
export interface Resolved {
  readonly profile: Profile;
  /** Null: an orphan reading, kept until a device is activated in its slot (issue 4). */
  readonly device: DeviceRow | null;
  /** The device's account; for an orphan, the gateway's account when it has one. */
  readonly accountId: string | null;
  /** Spec 6.2 patient_id: the patient's external_id when the reading arrives. */
  readonly patientExternalId: string | null;
}

/** A reading that names nothing the lab knows: a dead letter, not a store failure. */
export type Resolution = { readonly ok: Resolved } | { readonly problem: RpmlabError };

const unknown = (message: string, field: string): Resolution => ({
  problem: new RpmlabError("E_INGEST_UNKNOWN_DEVICE", message, { field }),
});

/**
 * Resolves gateway + sensor code (+ sensor id), or IMEI, to device, account and patient, for
 * one batch inside its transaction: `load` reads every device and gateway the batch names in
 * two queries (store errors propagate: the batch is retried), then each reading resolves in
 * memory. Unknown codes and types come back as problems, for dead letters.
 */
export class Resolver {
  /** Devices by lower-cased gateway uuid or IMEI, oldest first (as findByHardware orders). */
  private readonly devices = new Map<string, DeviceWithPatient[]>();
  private readonly gatewayAccounts = new Map<string, string | null>();

  private constructor(private readonly catalogue: Catalogue) {}

  static async load(
    tx: StoreRepositories,
    catalogue: Catalogue,
    sources: readonly UplinkSource[],
  ): Promise<Resolver> {
    const resolver = new Resolver(catalogue);
    const ids = [...new Set(sources.map(sourceId))];
    if (ids.length === 0) return resolver;
    for (const device of await tx.devices.findAllByHardware(ids)) {
      const key = device.hardwareUuid!.toLowerCase();
      const list = resolver.devices.get(key);
      if (list === undefined) resolver.devices.set(key, [device]);
      else list.push(device);
    }
    const gateways = sources.flatMap((s) => (s.kind === "gateway" ? [s.gatewayUuid] : []));
    for (const gateway of await tx.gateways.getMany([...new Set(gateways)])) {
      resolver.gatewayAccounts.set(gateway.gatewayUuid.toLowerCase(), gateway.accountId);
    }
    return resolver;
  }

  resolve(source: UplinkSource, reading: UplinkReading): Resolution {
    return source.kind === "gateway"
      ? this.gatewaySlot(source.gatewayUuid, reading)
      : this.cellular(source.imei, source.deviceType);
  }

  /** DevicesRepo.findByHardware over the loaded devices. */
  private find(
    hardwareUuid: string,
    sensorCode: string | null,
    sensorId?: string | null,
  ): DeviceWithPatient | undefined {
    return this.devices
      .get(hardwareUuid.toLowerCase())
      ?.find(
        (d) => d.sensorCode === sensorCode && (sensorId === undefined || d.sensorId === sensorId),
      );
  }

  private gatewaySlot(gatewayUuid: string, reading: UplinkReading): Resolution {
    const code = reading.sensorCode ?? "";
    const profiles = this.catalogue.withSensorCode(code);
    const first = profiles[0];
    if (first === undefined) {
      return unknown(
        `sensor_code ${code} is not in the device catalogue (spec 2.8)`,
        "sensor_code",
      );
    }
    // Spec 2.4: types with several devices per gateway tell them apart by sensor id.
    const bySensorId = profiles.some((p) => p.sensor_id.required);
    if (bySensorId && reading.sensorId === null) {
      return {
        problem: new RpmlabError(
          "E_MQTT_PAYLOAD",
          `sensor_id is required for sensor code ${code} (spec 2.4: several per gateway)`,
          { field: "sensor_id" },
        ),
      };
    }
    const device = this.find(gatewayUuid, code, bySensorId ? reading.sensorId : undefined);
    if (device !== undefined) return this.ofDevice(device);
    // An orphan: every type of one sensor code shares its GATT mapping and ranges (the cuff
    // sizes of code 10), so the first decodes it as the activated type will.
    const accountId = this.gatewayAccounts.get(gatewayUuid.toLowerCase()) ?? null;
    return { ok: { profile: first, device: null, accountId, patientExternalId: null } };
  }

  private cellular(imei: string, deviceType: string): Resolution {
    const device = this.find(imei, null);
    if (device !== undefined) return this.ofDevice(device);
    const profile = this.catalogue.find(deviceType);
    if (profile === undefined || profile.connectivity !== "cellular") {
      return unknown(
        `device_type "${deviceType}" is not a direct-cellular type of the device catalogue`,
        "device_type",
      );
    }
    return { ok: { profile, device: null, accountId: null, patientExternalId: null } };
  }

  private ofDevice(device: DeviceWithPatient): Resolution {
    const profile = this.catalogue.find(device.name);
    if (profile === undefined) {
      return unknown(
        `device ${device.id} is a "${device.name}", which the device catalogue does not know`,
        "device",
      );
    }
    return {
      ok: {
        profile,
        device,
        accountId: device.accountId,
        patientExternalId: device.patient?.externalId ?? null,
      },
    };
  }
}

function sourceId(source: UplinkSource): string {
  return source.kind === "gateway" ? source.gatewayUuid : source.imei;
}
