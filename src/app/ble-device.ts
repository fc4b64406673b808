import { openHciBackend } from "../ble/backend.ts";
import { BtsnoopWriter, fileSink } from "../ble/btsnoop.ts";
import type { BdAddr } from "../ble/hci/address.ts";
import { BlenoPeripheral } from "../ble/hosts/peripheral.ts";
import { EmulatedRadio } from "../ble/radio.ts";
import { Catalogue } from "../catalogue/catalogue.ts";
import type { Profile } from "../catalogue/schema.ts";
import type { BleSpec } from "../config/ble-spec.ts";
import { SystemClock, type TimerHandle } from "../core/clock.ts";
import { Rng } from "../core/rng.ts";
import { advertisingData, scanResponseData } from "../devices/advertising-data.ts";
import { BleDevice, type MeasureOutcome } from "../devices/ble-device.ts";
import { generateReadings } from "../readings/generate.ts";
import { PatientModels } from "../readings/patients.ts";

export interface DeviceAppOptions {
  profile: string;
  ble: BleSpec;
  serial: string;
  seed: string;
  /** Take a reading every this many ms (0: never). */
  everyMs: number;
  /** Advertise from this public address (a gateway's whitelist names it); else the controller's. */
  address?: BdAddr | undefined;
  btsnoop?: string | undefined;
  onEvent: (event: Record<string, unknown>) => void;
}

/**
 * `rpmlab device <profile> --ble SPEC`: one virtual device advertising from an adapter: a real
 * one (hci:N), a controller in another process (tcp://), or an emulated one (alone on its medium).
 */
export class DeviceApp {
  private timer: TimerHandle | undefined;

  private constructor(
    private readonly clock: SystemClock,
    /** What start opened, last first: stop closes them as a failed start does. */
    private readonly closes: ReadonlyArray<() => void>,
    readonly address: string,
    /** Resolves with the error when its controller (tcp://) goes away; else never. */
    readonly lost: Promise<Error>,
  ) {}

  static async start(options: DeviceAppOptions): Promise<DeviceApp> {
    const profile = Catalogue.load().get(options.profile);
    const clock = new SystemClock();
    // What is open so far, closed in reverse when a later step fails (an adapter bleno calls
    // unsupported, a transport that drops): the capture file and the transport's socket are
    // let go before start rejects, not at the process's exit.
    const opened: Array<() => void> = [() => clock.dispose()];
    try {
      const rng = new Rng(options.seed);
      const radio =
        options.ble.kind === "emulated" ? new EmulatedRadio(clock, rng.fork("radio")) : undefined;
      if (radio !== undefined) opened.push(() => radio.close());
      const backend = await openHciBackend(options.ble, `device-${options.serial}`.slice(0, 16), {
        radio,
        ...(options.address === undefined ? {} : { address: { value: options.address, clock } }),
      });
      opened.push(() => backend.close());
      const capture =
        options.btsnoop !== undefined && backend.tap !== undefined
          ? new BtsnoopWriter(fileSink(options.btsnoop), () => clock.now())
          : undefined;
      if (capture !== undefined && backend.tap !== undefined) {
        opened.push(() => capture.close());
        capture.add(backend.tap);
      }
      const device = new BleDevice({ profile, clock, serial: options.serial });
      const peripheral = await BlenoPeripheral.open(backend.factory, clock);
      opened.push(() => peripheral.quiesce());
      peripheral.on("accept", (address) =>
        options.onEvent({ event: "connected", central: address }),
      );
      peripheral.on("disconnect", (address) => {
        device.disconnected();
        options.onEvent({ event: "disconnected", central: address });
      });
      await peripheral.serve(device.services());
      await peripheral.advertiseData(
        advertisingData(profile),
        scanResponseData(device.localName, profile.sensor_code),
      );
      const app = new DeviceApp(
        clock,
        [...opened].reverse(),
        peripheral.address,
        backend.lost ?? new Promise(() => undefined),
      );
      options.onEvent({
        event: "advertising",
        address: peripheral.address,
        name: device.localName,
        profile: profile.name,
      });
      if (options.everyMs > 0) app.measureEvery(options.everyMs, profile, rng, device, options);
      return app;
    } catch (error) {
      closeAll(opened.reverse());
      throw error;
    }
  }

  /** A reading from a month of the first patient model's, every `everyMs`, round and round. */
  private measureEvery(
    everyMs: number,
    profile: Profile,
    rng: Rng,
    device: BleDevice,
    options: DeviceAppOptions,
  ): void {
    const model = PatientModels.load().models[0]!;
    const readings = generateReadings({
      devices: [profile],
      patient: model,
      rng: rng.fork("readings"),
      days: 30,
      duplicateRate: 0,
    });
    let next = 0;
    const tick = (): void => {
      const g = readings[next++ % readings.length]!;
      void device
        .measure({
          timestamp: g.timestamp,
          timezone_offset: g.timezone_offset,
          records: g.records,
        })
        .then((outcome: MeasureOutcome) =>
          options.onEvent({ event: "reading", outcome, records: g.records.length }),
        );
      this.timer = this.clock.setTimeout(tick, everyMs);
    };
    this.timer = this.clock.setTimeout(tick, everyMs);
  }

  /** Throws, once everything is closed, when the capture could not be written (btsnoop.ts). */
  stop(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    const error = closeAll(this.closes);
    if (error !== undefined) throw error;
  }
}

/**
 * Runs every close, each whatever the others do, and returns the first error: stop() throws it
 * (a capture that could not be written, E_CAPTURE_WRITE); a failed start rethrows its own error
 * instead, which a capture's would only hide.
 */
function closeAll(closes: ReadonlyArray<() => void>): unknown {
  let first: unknown;
  for (const close of closes) {
    try {
      close();
    } catch (error) {
      first ??= error;
    }
  }
  return first;
}
