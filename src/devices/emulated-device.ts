import { type EmulatedBackend, emulatedBackend } from "../ble/backend.ts";
import type { VirtualController } from "../ble/controller/virtual-controller.ts";
import { BlenoPeripheral } from "../ble/hosts/peripheral.ts";
import type { Position } from "../ble/medium/path-loss.ts";
import type { EmulatedRadio } from "../ble/radio.ts";
import type { TimerHandle } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import type { PhysicalReading } from "../readings/types.ts";
import { advertisingData, scanResponseData } from "./advertising-data.ts";
import { BleDevice, type BleDeviceOptions, type MeasureOutcome } from "./ble-device.ts";
import type { FleetDevice } from "./fleet-device.ts";

export interface EmulatedDeviceOptions extends BleDeviceOptions {
  /** Its public Bluetooth address: 12 hex characters (spec 2.3 mac_address). */
  readonly address: string;
  readonly radio: EmulatedRadio;
  /** Where it sits at home, next to its gateway. */
  readonly home: Position;
  /** Where it is while out of range: beyond the medium's range limit from every gateway. */
  readonly away: Position;
}

/** How long one round of advertising lasts while the device wants a gateway. */
export const ADVERTISING_BURST_MS = 30_000;
/** After a round no gateway answered, the next starts this much later, doubling up to the cap. */
const RETRY_FIRST_MS = 60_000;
const RETRY_MAX_MS = 60 * 60_000;

interface Pending {
  readonly reading: PhysicalReading;
  readonly stamp: number;
  readonly resolve: (outcome: MeasureOutcome) => void;
}

/**
 * A virtual device on the emulated BLE path (`transports.ble: emulated` in a scenario): the same
 * BleDevice as DirectDevice, served by an unmodified bleno in this process on its own
 * VirtualController of the run's EmulatedRadio.
 *
 * Like a real cuff it advertises only while it wants a gateway — readings stored, or a live one
 * waiting for a central — in rounds of ADVERTISING_BURST_MS, the next round later and later while
 * no gateway comes (a month of continuous 100 ms advertising would be millions of clock events),
 * and goes quiet once it has nothing to send. A reading of a device that does not store offline
 * waits for a gateway for one round and is lost, by design and counted, when none connects.
 * Out of range, it is moved beyond the medium's range limit; back in range, it starts a round.
 */
export class EmulatedDevice implements FleetDevice {
  readonly ble: BleDevice;
  readonly address: string;
  private readonly pending: Pending[] = [];
  private reach = true;
  private connected = false;
  private advertising = false;
  private burst: TimerHandle | undefined;
  private retry: TimerHandle | undefined;
  private retryMs = RETRY_FIRST_MS;
  private closed = false;

  private constructor(
    private readonly options: EmulatedDeviceOptions,
    ble: BleDevice,
    private readonly backend: EmulatedBackend,
    private readonly peripheral: BlenoPeripheral,
  ) {
    this.ble = ble;
    this.address = options.address.toUpperCase();
    ble.onListening = () => this.measurePending();
    peripheral.on("accept", () => {
      this.connected = true;
      this.clearBurst();
    });
    peripheral.on("disconnect", () => {
      this.connected = false;
      ble.disconnected();
      // bleno would advertise again at once. A visit that left something behind (a session
      // that failed, a reading that missed it) is tried again after the back-off, so a device
      // a gateway cannot empty is not visited in a loop.
      this.quiet();
      if (this.wantsGateway) this.retryLater();
    });
  }

  /** Powers on: its controller joins the radio at home, bleno starts and serves its GATT database. */
  static async open(options: EmulatedDeviceOptions): Promise<EmulatedDevice> {
    if (!/^[0-9A-Fa-f]{12}$/.test(options.address)) {
      throw new RpmlabError("E_USAGE", `a device address is 12 hex characters`, {
        field: "address",
        value: options.address,
      });
    }
    const colons = options.address.toLowerCase().replace(/(..)(?!$)/g, "$1:");
    const name = `device:${options.address.toUpperCase()}`;
    const backend = emulatedBackend(options.radio, name, {
      position: options.home,
      address: colons,
    });
    const ble = new BleDevice(options);
    try {
      const peripheral = await BlenoPeripheral.open(backend.factory, options.clock);
      await peripheral.serve(ble.services());
      return new EmulatedDevice(options, ble, backend, peripheral);
    } catch (error) {
      backend.close();
      throw error;
    }
  }

  /** Its radio on the medium (interference around it: RadioMedium.setInterferenceAround). */
  get station(): VirtualController {
    return this.backend.controller;
  }

  get wantsGateway(): boolean {
    return this.pending.length > 0 || this.waiting > 0;
  }

  get waiting(): number {
    return this.ble.unsent;
  }

  /** The emulated medium has no locks: households are out of each other's range. */
  release(_gatewayUuid: string): void {}

  setInRange(inRange: boolean): void {
    if (this.reach === inRange || this.closed) return;
    this.reach = inRange;
    // Moving beyond the range limit starts the link's supervision timeout (RadioMedium.move).
    this.options.radio.medium.move(
      this.backend.controller,
      inRange ? this.options.home : this.options.away,
    );
    if (inRange) this.want();
  }

  async take(reading: PhysicalReading, resentStamp?: number): Promise<MeasureOutcome> {
    if (this.ble.profile.stores_offline || !this.reach || this.connected) {
      const outcome = await this.ble.measure(reading, resentStamp);
      if (outcome === "stored") this.want();
      return outcome;
    }
    // Stamped now, as taken, though it goes out once a gateway listens.
    const stamp = resentStamp ?? Math.floor(this.ble.clock.now() / 1000) * 1000;
    return new Promise<MeasureOutcome>((resolve) => {
      this.pending.push({ reading, stamp, resolve });
      this.want();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clearBurst();
    if (this.retry !== undefined) this.options.clock.clearTimeout(this.retry);
    this.retry = undefined;
    this.peripheral.quiesce();
    this.backend.close();
    this.measurePending();
  }

  /**
   * It has something new for a gateway (a reading, or it is back in range): a round of
   * advertising starts now unless one runs, and the back-off starts over.
   */
  private want(): void {
    if (this.closed || !this.wantsGateway) return;
    this.retryMs = RETRY_FIRST_MS;
    if (this.retry !== undefined) this.options.clock.clearTimeout(this.retry);
    this.retry = undefined;
    this.round();
  }

  private round(): void {
    if (this.advertising || this.connected || this.closed) return;
    this.advertising = true;
    void this.peripheral.advertiseData(
      advertisingData(this.ble.profile),
      scanResponseData(this.ble.localName, this.ble.profile.sensor_code),
    );
    this.burst = this.options.clock.setTimeout(() => {
      this.burst = undefined;
      if (this.connected || this.closed) return;
      // No gateway came this round: what could not wait is lost, the rest waits for the next.
      this.quiet();
      this.measurePending();
      if (this.wantsGateway) this.retryLater();
    }, ADVERTISING_BURST_MS);
  }

  private retryLater(): void {
    if (this.retry !== undefined || this.closed) return;
    this.retry = this.options.clock.setTimeout(() => {
      this.retry = undefined;
      if (this.wantsGateway) this.round();
    }, this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  private clearBurst(): void {
    if (this.burst !== undefined) this.options.clock.clearTimeout(this.burst);
    this.burst = undefined;
  }

  private quiet(): void {
    this.clearBurst();
    if (!this.advertising) return;
    this.advertising = false;
    void this.peripheral.stopAdvertising();
  }

  /** Takes the waiting readings now: sent while a gateway listens, otherwise stored or lost. */
  private measurePending(): void {
    for (const { reading, stamp, resolve } of this.pending.splice(0)) {
      void this.ble.measure(reading, stamp).then(resolve, () => resolve("lost"));
    }
    // Sent while connected: with nothing left, it stays quiet after this visit.
  }
}
