import type { PhysicalReading } from "../readings/types.ts";
import type { BleDevice, MeasureOutcome } from "./ble-device.ts";

/**
 * A gateway-connected device as a scenario's fleet and fault actions drive it, on either BLE
 * path: DirectDevice (`transports.ble: direct`) or EmulatedDevice (`emulated`: bleno on the
 * run's emulated radio). Both keep the same semantics for a reading taken (`take`).
 */
export interface FleetDevice {
  /** Readings, RACP store, drifting clock, counts. */
  readonly ble: BleDevice;
  /** It has readings waiting for a gateway (stored, or about to be lost). */
  readonly wantsGateway: boolean;
  /** Readings it still holds for a gateway (the run drains them before it reports). */
  readonly waiting: number;
  /**
   * The patient takes a reading: a device that stores offline keeps it when no gateway listens
   * and asks for one; one that does not needs a gateway at once, and loses the reading when none
   * comes (by design, counted). With `resentStamp`: a reading sent again as it was stamped then.
   */
  take(reading: PhysicalReading, resentStamp?: number): Promise<MeasureOutcome>;
  /** Fault: it leaves its gateway's reach (links drop) or comes back (and asks for a gateway). */
  setInRange(inRange: boolean): void;
  /** The gateway it was locked to lets it go (it left that gateway's whitelist). */
  release(gatewayUuid: string): void;
  /** Powers off (hosts and controllers of the emulated path). */
  close(): Promise<void>;
}
