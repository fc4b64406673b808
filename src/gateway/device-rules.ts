import type { Catalogue } from "../catalogue/catalogue.ts";
import type { HeldDevicePayload, WhitelistDown } from "../mqtt/envelope.ts";
import { macOf } from "./reading-assembler.ts";

/** A device the gateway accepts: its address and the slot it takes (spec 2.3, 2.8). */
export interface HeldDevice {
  /** 12 upper-case hex characters. */
  readonly mac: string;
  readonly sensorCode: string;
  readonly sensorId: string | null;
}

export interface RefusedEntry {
  readonly mac: string;
  readonly sensorCode: string;
  readonly reason: string;
}

export interface WhitelistChange {
  readonly added: readonly HeldDevice[];
  readonly removed: readonly HeldDevice[];
  readonly refused: readonly RefusedEntry[];
}

/**
 * The whitelist as the gateway holds and enforces it. The service sends the whole list on the
 * downlink (spec 2.3); the gateway keeps each entry that fits the device rules of spec 2.8 and
 * refuses the others (they stay RE at the service, since the gateway does not report them):
 *
 * - one device per sensor code (the profile's `one_per_sensor_code`, and the medication cap's
 *   `many_with_distinct_sensor_codes`, whose slot is the sensor code too);
 * - inhalers (`many_by_sensor_id`) share the code, one per sensor id, which they must carry;
 * - a sensor code of no gateway-connected profile is refused.
 *
 * The first entry of a slot keeps it; the service sends entries in activation order.
 */
export class DeviceRules {
  private readonly held = new Map<string, HeldDevice>();
  readonly counts = { applied: 0, refused: 0 };

  constructor(private readonly catalogue: Catalogue) {}

  /** The devices held now, in the order the service listed them. */
  list(): HeldDevice[] {
    return [...this.held.values()];
  }

  /** The held device with this address (any spelling), if any. */
  get(address: string): HeldDevice | undefined {
    return this.held.get(macOf(address));
  }

  /** Whether an advertiser may be connected: held, and advertising the code it holds. */
  admits(address: string, sensorCode: string | undefined): HeldDevice | undefined {
    const device = this.get(address);
    return device !== undefined && (sensorCode === undefined || device.sensorCode === sensorCode)
      ? device
      : undefined;
  }

  /** As the status payload reports it (the acknowledgement, spec 2.3). */
  report(): HeldDevicePayload[] {
    return this.list().map((d) => ({
      mac_address: d.mac,
      sensor_code: d.sensorCode,
      ...(d.sensorId === null ? {} : { sensor_id: d.sensorId }),
    }));
  }

  /** Restores a list held before a restart. */
  restore(devices: readonly HeldDevice[]): void {
    this.held.clear();
    for (const d of devices) this.held.set(d.mac, d);
  }

  /** Replaces the held list with what the downlink allows. */
  apply(down: WhitelistDown): WhitelistChange {
    const next = new Map<string, HeldDevice>();
    const slots = new Map<string, string>();
    const refused: RefusedEntry[] = [];
    for (const entry of down.devices) {
      const mac = entry.mac_address;
      const sensorCode = entry.sensor_code;
      const refuse = (reason: string) => refused.push({ mac, sensorCode, reason });
      const listed = next.get(mac);
      if (listed !== undefined) {
        // One address is one device: a second entry replaced the first unseen, and the slot
        // the first took stayed taken, refusing the device that had the right to it.
        refuse(`${mac} is listed already, under sensor code ${listed.sensorCode}`);
        continue;
      }
      const profile = this.catalogue
        .withSensorCode(sensorCode)
        .find((p) => p.connectivity === "gateway");
      if (profile === undefined) {
        refuse(`sensor code ${sensorCode} is no gateway-connected device type`);
        continue;
      }
      const bySensorId = profile.per_gateway === "many_by_sensor_id";
      const sensorId = entry.sensor_id ?? null;
      if (bySensorId && sensorId === null) {
        refuse(`${profile.name} devices share a gateway by sensor id, and this entry has none`);
        continue;
      }
      const slot = bySensorId ? `${sensorCode}/${sensorId}` : sensorCode;
      const taken = slots.get(slot);
      if (taken !== undefined && taken !== mac) {
        refuse(`the slot of sensor code ${slot} is held by ${taken} (spec 2.8)`);
        continue;
      }
      slots.set(slot, mac);
      next.set(mac, { mac, sensorCode, sensorId: bySensorId ? sensorId : null });
    }
    const added = [...next.values()].filter((d) => !same(this.held.get(d.mac), d));
    const removed = [...this.held.values()].filter((d) => !same(next.get(d.mac), d));
    this.held.clear();
    for (const [mac, d] of next) this.held.set(mac, d);
    this.counts.applied++;
    this.counts.refused += refused.length;
    return { added, removed, refused };
  }
}

function same(a: HeldDevice | undefined, b: HeldDevice | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    a.mac === b.mac &&
    a.sensorCode === b.sensorCode &&
    a.sensorId === b.sensorId
  );
}
