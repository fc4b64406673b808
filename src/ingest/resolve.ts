import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Profile } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Uplink, UplinkReading, UplinkSource } from "../mqtt/uplink.ts";
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

/** A device that left a gateway slot or IMEI (unlinked, replaced, moved) at `at`. */
interface Departure {
  readonly device: DeviceWithPatient;
  readonly at: number;
  /** Its patient then (null: none, or an entry logged before migration 0009 kept it). */
  readonly patientExternalId: string | null;
}

/**
 * Resolves gateway + sensor code (+ sensor id), or IMEI, to device, account and patient, for
 * one batch inside its transaction: `load` reads every device and gateway the batch names, and
 * the devices that left them since its oldest reading, in a few queries (store errors
 * propagate: the batch is retried), then each reading resolves in memory. Unknown codes and
 * types come back as problems, for dead letters.
 *
 * A reading belongs to the device that held its slot when the gateway (or the cellular device)
 * took it: one relayed late — queued through an outage, then sent after an unlink or a
 * replacement — goes to the device and patient it was taken for (spec 6.2: patient_id "stable
 * across gateway replacement or unlinking"), never to the next device activated in the slot.
 * A slot a replacement emptied (spec 4.3: the device moved to the new gateway or IMEI when its
 * box shipped) still belongs to that device while nothing else holds it: the patient measures
 * on the old hardware until the new arrives, and those readings are the device's, not orphans.
 */
export class Resolver {
  /** Devices by lower-cased gateway uuid or IMEI, oldest first (as findByHardware orders). */
  private readonly devices = new Map<string, DeviceWithPatient[]>();
  /** Devices that left each lower-cased gateway uuid or IMEI, oldest departure first. */
  private readonly departures = new Map<string, Departure[]>();
  /**
   * Devices a replacement moved off each lower-cased gateway uuid or IMEI that no device holds
   * now, latest move first.
   */
  private readonly movedOff = new Map<string, Departure[]>();
  private readonly gatewayAccounts = new Map<string, string | null>();

  private constructor(private readonly catalogue: Catalogue) {}

  static async load(
    tx: StoreRepositories,
    catalogue: Catalogue,
    uplinks: readonly Uplink[],
  ): Promise<Resolver> {
    const resolver = new Resolver(catalogue);
    const ids = [...new Set(uplinks.map((u) => sourceId(u.source)))];
    if (ids.length === 0) return resolver;
    for (const device of await tx.devices.findAllByHardware(ids)) {
      push(resolver.devices, device.hardwareUuid!, device);
    }
    let oldest = Number.POSITIVE_INFINITY;
    for (const u of uplinks) for (const r of u.readings) oldest = Math.min(oldest, r.receivedAt);
    const departures = await tx.hardwareLogs.departures(ids, oldest);
    if (departures.length > 0) {
      const departed = new Map(
        (await tx.devices.getManyById(departures.map((d) => d.deviceId))).map((d) => [d.id, d]),
      );
      for (const {
        deviceId,
        previousHardwareUuid,
        previousPatientExternalId,
        created,
      } of departures) {
        const device = departed.get(deviceId);
        if (device !== undefined) {
          push(resolver.departures, previousHardwareUuid!, {
            device,
            at: created,
            patientExternalId: previousPatientExternalId,
          });
        }
      }
    }
    await resolver.loadMovedOff(
      tx,
      ids.filter((id) => !resolver.devices.has(id.toLowerCase())),
    );
    const gateways = uplinks.flatMap((u) =>
      u.source.kind === "gateway" ? [u.source.gatewayUuid] : [],
    );
    for (const gateway of await tx.gateways.getMany([...new Set(gateways)])) {
      resolver.gatewayAccounts.set(gateway.gatewayUuid.toLowerCase(), gateway.accountId);
    }
    return resolver;
  }

  /** The devices replacements moved off these empty slots, still linked (movedOff). */
  private async loadMovedOff(tx: StoreRepositories, vacant: readonly string[]): Promise<void> {
    if (vacant.length === 0) return;
    const moves = await tx.hardwareLogs.replacedFrom(vacant);
    if (moves.length === 0) return;
    const moved = new Map(
      (await tx.devices.getManyById(moves.map((m) => m.deviceId))).map((d) => [d.id, d]),
    );
    for (const { deviceId, previousHardwareUuid, created } of moves.reverse()) {
      const device = moved.get(deviceId);
      // Unlinked since (its patient unenrolled): nothing of the old hardware is its any more.
      if (device === undefined || device.hardwareUuid === null) continue;
      push(this.movedOff, previousHardwareUuid!, {
        device,
        at: created,
        patientExternalId: device.patient?.externalId ?? null,
      });
    }
  }

  resolve(source: UplinkSource, reading: UplinkReading): Resolution {
    return source.kind === "gateway"
      ? this.gatewaySlot(source.gatewayUuid, reading)
      : this.cellular(source.imei, source.deviceType, reading);
  }

  /**
   * The device that held the slot when the reading was taken (`takenAt`, the sender's clock):
   * the first to leave it after then, if it existed by then and `took` the reading, with its
   * patient of then; otherwise the device in it now (DevicesRepo.findByHardware over the loaded
   * devices), whose readings from before its activation are its own; with none, the device a
   * replacement moved off it before the reading (movedOff). A sender's clock gone far back (a
   * reset) so finds no device that left, not one from years before.
   */
  private find(
    hardwareUuid: string,
    takenAt: number,
    fits: (device: DeviceWithPatient) => boolean,
    took: (device: DeviceWithPatient) => boolean = fits,
  ): Resolution | undefined {
    const key = hardwareUuid.toLowerCase();
    const holder = this.departures
      .get(key)
      ?.find((d) => d.at > takenAt && d.device.created <= takenAt && took(d.device));
    if (holder !== undefined) {
      return this.ofDevice(
        holder.device,
        holder.patientExternalId ?? holder.device.patient?.externalId ?? null,
      );
    }
    const device = this.devices.get(key)?.find(fits);
    if (device !== undefined) return this.ofDevice(device);
    const moved = this.movedOff.get(key)?.find((d) => d.at <= takenAt && took(d.device));
    return moved === undefined ? undefined : this.ofDevice(moved.device);
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
    const found = this.find(
      gatewayUuid,
      reading.receivedAt,
      (d) => d.sensorCode === code && (!bySensorId || d.sensorId === reading.sensorId),
    );
    if (found !== undefined) return found;
    // An orphan: every type of one sensor code shares its GATT mapping and ranges (the cuff
    // sizes of code 10), so the first decodes it as the activated type will.
    const accountId = this.gatewayAccounts.get(gatewayUuid.toLowerCase()) ?? null;
    return { ok: { profile: first, device: null, accountId, patientExternalId: null } };
  }

  private cellular(imei: string, deviceType: string, reading: UplinkReading): Resolution {
    const profile = this.catalogue.find(deviceType);
    // The device on the IMEI now decodes whatever comes (another type is a dead letter); one
    // that left it took only readings of its own type there.
    const found = this.find(
      imei,
      reading.receivedAt,
      (d) => d.sensorCode === null,
      (d) => d.sensorCode === null && this.catalogue.find(d.name) === profile,
    );
    // A type the catalogue knows, other than the activated device's: the reading is refused for
    // its device_type, not by that device's codec for a characteristic it lacks (a reason that
    // blamed the values). A name the catalogue does not know is still decoded as the device's.
    if (
      found !== undefined &&
      "ok" in found &&
      profile !== undefined &&
      found.ok.profile !== profile
    ) {
      return unknown(
        `device_type "${deviceType}" is not the type of the device activated on IMEI ${imei}, a "${found.ok.device!.name}"`,
        "device_type",
      );
    }
    if (found !== undefined) return found;
    if (profile === undefined || profile.connectivity !== "cellular") {
      return unknown(
        `device_type "${deviceType}" is not a direct-cellular type of the device catalogue`,
        "device_type",
      );
    }
    return { ok: { profile, device: null, accountId: null, patientExternalId: null } };
  }

  private ofDevice(
    device: DeviceWithPatient,
    patientExternalId = device.patient?.externalId ?? null,
  ): Resolution {
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
        patientExternalId,
      },
    };
  }
}

function sourceId(source: UplinkSource): string {
  return source.kind === "gateway" ? source.gatewayUuid : source.imei;
}

function push<T>(map: Map<string, T[]>, hardwareUuid: string, item: T): void {
  const key = hardwareUuid.toLowerCase();
  const list = map.get(key);
  if (list === undefined) map.set(key, [item]);
  else list.push(item);
}
