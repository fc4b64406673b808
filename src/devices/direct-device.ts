import { RpmlabError } from "../core/errors.ts";
import { DirectLink } from "../gateway/direct-link.ts";
import type { PhysicalReading } from "../readings/types.ts";
import { BleDevice, type BleDeviceOptions, type MeasureOutcome } from "./ble-device.ts";
import type { FleetDevice } from "./fleet-device.ts";

export interface DirectDeviceOptions extends BleDeviceOptions {
  /** The Bluetooth address it would advertise: 12 hex characters (spec 2.3 mac_address). */
  readonly address: string;
}

/** A gateway's scanner on the direct medium: true when it will connect to the advertiser. */
export type DirectScanner = (device: DirectDevice) => boolean;

/**
 * The direct medium: who hears a device's advertising. No radio model, only reach, which is a
 * per-device fault (DirectDevice.setInRange). A device advertises when it has something to send
 * and when it comes back in reach; the first scanner that takes it connects.
 */
export class DirectRadio {
  private readonly scanners: DirectScanner[] = [];
  private readonly devices = new Map<string, DirectDevice>();

  /** Starts listening; returns the function that stops. */
  scan(scanner: DirectScanner): () => void {
    this.scanners.push(scanner);
    for (const device of this.devices.values()) if (device.wantsGateway) this.advertise(device);
    return () => {
      const i = this.scanners.indexOf(scanner);
      if (i >= 0) this.scanners.splice(i, 1);
    };
  }

  add(device: DirectDevice): void {
    this.devices.set(device.address, device);
  }

  /** The device leaves the medium (powered off), unless another has taken its address since. */
  remove(device: DirectDevice): void {
    if (this.devices.get(device.address) === device) this.devices.delete(device.address);
  }

  /** The device with this address (12 hex, any case), if any. */
  get(address: string): DirectDevice | undefined {
    return this.devices.get(address.toUpperCase());
  }

  list(): DirectDevice[] {
    return [...this.devices.values()];
  }

  /** A device advertises: true when a gateway will connect. */
  advertise(device: DirectDevice): boolean {
    if (!device.inRange || device.connected) return false;
    return this.scanners.some((scan) => scan(device));
  }
}

interface Pending {
  readonly reading: PhysicalReading;
  readonly resentStamp: number | undefined;
  readonly resolve: (outcome: MeasureOutcome) => void;
}

/**
 * A virtual device on the direct medium (`--ble direct`): the same BleDevice (readings, codecs,
 * RACP store, clock that drifts until set, counts) served to a gateway through a DirectLink
 * instead of bleno. It locks to the first gateway that connects to it and refuses others until
 * that gateway releases it (spec 2.3: "devices locked to this gateway").
 *
 * A reading is taken with `take()`: a device that stores offline keeps it and advertises, so the
 * gateway fetches it from the store; one that does not needs a gateway listening at once, and
 * loses the reading when none connects (or it is out of reach), by design and counted.
 */
export class DirectDevice implements FleetDevice {
  readonly ble: BleDevice;
  readonly address: string;
  readonly counts = { refusedConnections: 0, linkDrops: 0 };
  private link: DirectLink | undefined;
  private reach = true;
  /** Powered off for good (close): out of every gateway's reach from then on. */
  private closed = false;
  private lock: string | null = null;
  private readonly pending: Pending[] = [];

  constructor(
    options: DirectDeviceOptions,
    private readonly radio: DirectRadio,
  ) {
    if (!/^[0-9A-Fa-f]{12}$/.test(options.address)) {
      throw new RpmlabError("E_USAGE", `a device address is 12 hex characters`, {
        field: "address",
        value: options.address,
      });
    }
    this.address = options.address.toUpperCase();
    this.ble = new BleDevice(options);
    this.ble.onListening = () => this.measurePending();
    radio.add(this);
  }

  get sensorCode(): string | undefined {
    return this.ble.profile.sensor_code ?? undefined;
  }

  get connected(): boolean {
    return this.link?.connected === true;
  }

  get inRange(): boolean {
    return this.reach;
  }

  /** The gateway it is locked to, or null. */
  get lockedTo(): string | null {
    return this.lock;
  }

  /** Whether it has readings waiting for a gateway (stored, or about to be lost). */
  get wantsGateway(): boolean {
    return this.pending.length > 0 || this.ble.store.size > 0;
  }

  get waiting(): number {
    return this.ble.store.size;
  }

  /**
   * Powers off for good (a unit sent back to the vendor): it leaves the medium, its link drops,
   * and a reading waiting for a gateway is taken now, with none listening (stored, or lost by a
   * device that cannot store): left waiting, its outcome would never come.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.reach = false;
    this.radio.remove(this);
    this.link?.drop();
    this.measurePending();
  }

  /** A gateway connects: refused out of reach, while connected, or when locked to another. */
  connect(gatewayUuid: string): DirectLink {
    const refuse = (why: string) => {
      this.counts.refusedConnections++;
      return new RpmlabError("E_BLE_GATT", `${this.address}: ${why}`, { device: this.address });
    };
    if (!this.reach) throw refuse("out of reach");
    if (this.connected) throw refuse("already connected");
    if (this.lock !== null && this.lock !== gatewayUuid) {
      throw refuse(`locked to gateway ${this.lock}`);
    }
    this.lock = gatewayUuid;
    const link = new DirectLink(colonAddress(this.address), this.ble.services(), () => {
      this.ble.disconnected();
      // A reading that needed this connection and did not get to go is lost (it cannot store).
      queueMicrotask(() => this.measurePending());
    });
    this.link = link;
    return link;
  }

  /** The gateway it is locked to lets it go (the device left that gateway's whitelist). */
  release(gatewayUuid: string): void {
    if (this.lock === gatewayUuid) this.lock = null;
  }

  /** Fault: the device leaves reach (the link drops) or comes back (and advertises). */
  setInRange(inRange: boolean): void {
    if (this.reach === inRange || this.closed) return;
    this.reach = inRange;
    if (!inRange && this.link?.connected === true) {
      this.counts.linkDrops++;
      this.link.drop();
    }
    if (inRange && this.wantsGateway) this.radio.advertise(this);
  }

  /**
   * The patient takes a reading (module doc); with `resentStamp`, the device sends a reading it
   * took before again, stamped as it was then (a duplicate burst).
   */
  async take(reading: PhysicalReading, resentStamp?: number): Promise<MeasureOutcome> {
    if (this.ble.profile.stores_offline || !this.reach || this.connected) {
      const outcome = await this.ble.measure(reading, resentStamp);
      if (outcome === "stored") this.radio.advertise(this);
      return outcome;
    }
    return new Promise<MeasureOutcome>((resolve) => {
      this.pending.push({ reading, resentStamp, resolve });
      if (!this.radio.advertise(this)) this.measurePending();
    });
  }

  /** Takes the waiting readings now: sent while a gateway listens, otherwise stored or lost. */
  private measurePending(): void {
    for (const { reading, resentStamp, resolve } of this.pending.splice(0)) {
      void this.ble.measure(reading, resentStamp).then(resolve, () => resolve("lost"));
    }
  }
}

/** "F01122334455" → "f0:11:22:33:44:55", as noble prints addresses. */
function colonAddress(mac: string): string {
  return mac.toLowerCase().replace(/(..)(?!$)/g, "$1:");
}
