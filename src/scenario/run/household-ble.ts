import { NobleBle } from "../../app/ble-gateway.ts";
import type { Position } from "../../ble/medium/path-loss.ts";
import type { EmulatedRadio } from "../../ble/radio.ts";
import type { Clock } from "../../core/clock.ts";
import type { Rng } from "../../core/rng.ts";
import {
  DirectDevice,
  type DirectDeviceOptions,
  DirectRadio,
} from "../../devices/direct-device.ts";
import { EmulatedDevice } from "../../devices/emulated-device.ts";
import type { FleetDevice } from "../../devices/fleet-device.ts";
import { DirectBle, type GatewayBle } from "../../gateway/gateway-ble.ts";

/**
 * Emulated BLE: households this many range limits apart, so a device hears its own gateway only;
 * a device out of range stands half way to the next household.
 */
const HOUSEHOLD_SPACING = 10;
/**
 * Emulated BLE: a gateway visits a device again no sooner than this. Devices here go quiet once
 * they have sent everything, so this only spaces visits of a device that still advertises.
 */
const REVISIT_MS = 5_000;

/**
 * One household's BLE, on the run's path (issue 7 §1): its own DirectRadio on the direct path;
 * on emulated BLE, a place on the run's EmulatedRadio, where its gateway (noble) stands and its
 * devices (bleno) sit a metre or two away.
 */
export class HouseholdBle {
  /** The direct path's medium of this household. */
  readonly direct = new DirectRadio();
  /** Emulated BLE: where the household's gateway stands. */
  readonly home: Position;

  constructor(
    private readonly radio: EmulatedRadio | undefined,
    index: number,
  ) {
    this.home = { x: index * HOUSEHOLD_SPACING * this.rangeM, y: 0 };
  }

  private get rangeM(): number {
    return this.radio?.medium.propagation.rangeM ?? 0;
  }

  /** The household's `nth` device, powered on. */
  async device(options: DirectDeviceOptions, nth: number): Promise<FleetDevice> {
    if (this.radio === undefined) return new DirectDevice(options, this.direct);
    const { x, y } = this.home;
    return await EmulatedDevice.open({
      ...options,
      radio: this.radio,
      home: { x: x + 1 + nth, y: y + 1 },
      away: { x: x + (HOUSEHOLD_SPACING / 2) * this.rangeM, y },
    });
  }

  /** The BLE side of the household's gateway `uuid`. */
  gateway(clock: Clock, rng: Rng, uuid: string): GatewayBle {
    if (this.radio === undefined) return new DirectBle(this.direct);
    return new NobleBle({ kind: "emulated" }, clock, rng, {
      radio: this.radio,
      name: `gateway:${uuid}`,
      position: this.home,
      revisitMs: REVISIT_MS,
    });
  }
}
