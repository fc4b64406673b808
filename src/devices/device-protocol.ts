import type { PhysicalReading } from "../readings/types.ts";
import type { MeasureOutcome } from "./ble-device.ts";

/** What a device worker is started with. */
export interface DeviceWorkerData {
  profile: string;
  serial: string;
  clockOffsetMs?: number;
  driftPpm?: number;
}

export interface DeviceStatus {
  address: string;
  counts: { sent: number; stored: number; lost: number; timeWrites: number };
  stored: number;
  /** Device clock minus lab clock, ms. */
  clockError: number;
  connected: boolean;
}

/** Lab → device worker. */
export type DeviceRequest =
  | { id: number; type: "measure"; reading: PhysicalReading }
  | { id: number; type: "status" };

/** Device worker → lab. */
export type DeviceMessage =
  | { type: "ready"; address: string }
  | { type: "connected"; address: string }
  | { type: "disconnected"; address: string }
  | { type: "listening" }
  | { type: "failed"; message: string }
  | { id: number; type: "measured"; outcome: MeasureOutcome }
  | { id: number; type: "status"; status: DeviceStatus };
