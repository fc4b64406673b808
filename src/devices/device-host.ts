import type { VirtualController } from "../ble/controller/virtual-controller.ts";
import { HostWorker } from "../ble/hosts/worker-host.ts";
import { RpmlabError } from "../core/errors.ts";
import { TypedEvents } from "../core/events.ts";
import type { PhysicalReading } from "../readings/types.ts";
import type { MeasureOutcome } from "./ble-device.ts";
import type { DeviceMessage, DeviceStatus, DeviceWorkerData } from "./device-protocol.ts";

interface DeviceHostEvents {
  connected: string;
  disconnected: string;
  /** The central subscribed to everything the device pushes: live readings go out now. */
  listening: undefined;
  [key: string]: unknown;
}

/** A virtual BLE device running in a worker, seen from the lab's thread. */
export class DeviceHost {
  readonly events = new TypedEvents<DeviceHostEvents>();
  private nextId = 1;
  private readonly pending = new Map<number, (m: DeviceMessage) => void>();

  private constructor(
    private readonly host: HostWorker,
    readonly address: string,
  ) {
    host.worker.on("message", (m: DeviceMessage) => {
      if ("id" in m) {
        this.pending.get(m.id)?.(m);
        this.pending.delete(m.id);
      } else if (m.type === "connected" || m.type === "disconnected")
        this.events.emit(m.type, m.address);
      else if (m.type === "listening") this.events.emit("listening", undefined);
    });
  }

  /** Starts the worker and waits until the device advertises. */
  static start(controller: VirtualController, data: DeviceWorkerData): Promise<DeviceHost> {
    const host = HostWorker.start(controller, new URL("./device-worker.ts", import.meta.url), data);
    return new Promise((resolve, reject) => {
      const onMessage = (m: DeviceMessage): void => {
        if ("id" in m) return;
        if (m.type === "ready") {
          host.worker.off("message", onMessage);
          resolve(new DeviceHost(host, m.address));
        } else if (m.type === "failed") {
          host.worker.off("message", onMessage);
          void host.close();
          reject(new RpmlabError("E_BLE_HOST", `device ${data.profile}: ${m.message}`));
        }
      };
      host.worker.on("message", onMessage);
      host.worker.once("error", (error) =>
        reject(new RpmlabError("E_BLE_HOST", `device worker: ${error.message}`, {}, error)),
      );
    });
  }

  private request<T extends DeviceMessage>(
    body: { type: "measure"; reading: PhysicalReading } | { type: "status" },
  ): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, (m) => resolve(m as T));
      this.host.worker.postMessage({ id, ...body });
    });
  }

  async measure(reading: PhysicalReading): Promise<MeasureOutcome> {
    const m = await this.request<Extract<DeviceMessage, { type: "measured" }>>({
      type: "measure",
      reading,
    });
    return m.outcome;
  }

  async status(): Promise<DeviceStatus> {
    const m = await this.request<Extract<DeviceMessage, { type: "status" }>>({ type: "status" });
    return m.status;
  }

  async close(): Promise<void> {
    this.events.removeAll();
    await this.host.close();
  }
}
