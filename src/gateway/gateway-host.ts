import type { VirtualController } from "../ble/controller/virtual-controller.ts";
import { HostWorker } from "../ble/hosts/worker-host.ts";
import { type ErrorCode, RpmlabError } from "../core/errors.ts";
import type { SessionResult } from "./ble-session.ts";
import type { GatewayMessage, GatewayRequest } from "./gateway-protocol.ts";
import type { RawValueSink } from "./raw-values.ts";

export interface Visit {
  address: string;
  rssi: number;
  result: SessionResult;
}

/** The gateway's BLE central running in a worker, seen from the lab's thread. */
export class GatewayHost {
  private nextId = 1;
  private readonly pending = new Map<number, (m: GatewayMessage) => void>();

  private constructor(
    private readonly host: HostWorker,
    readonly address: string,
    sink: RawValueSink,
  ) {
    host.worker.on("message", (m: GatewayMessage) => {
      if (m.type === "value") sink.deliver(m.value);
      else if ("id" in m) {
        this.pending.get(m.id)?.(m);
        this.pending.delete(m.id);
      }
    });
  }

  static start(controller: VirtualController, sink: RawValueSink): Promise<GatewayHost> {
    const host = HostWorker.start(controller, new URL("./gateway-worker.ts", import.meta.url), {});
    return new Promise((resolve, reject) => {
      const onMessage = (m: GatewayMessage): void => {
        if (m.type === "ready") {
          host.worker.off("message", onMessage);
          resolve(new GatewayHost(host, m.address, sink));
        } else if (m.type === "failed") {
          host.worker.off("message", onMessage);
          void host.close();
          reject(new RpmlabError("E_BLE_HOST", `gateway: ${m.message}`));
        }
      };
      host.worker.on("message", onMessage);
    });
  }

  /** Scans for the first whitelisted device and runs one session with it. */
  visit(request: Omit<GatewayRequest, "id" | "type">): Promise<Visit> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (m) => {
        if (m.type === "visited") resolve({ address: m.address, rssi: m.rssi, result: m.result });
        else if (m.type === "error") {
          reject(new RpmlabError((m.code as ErrorCode | undefined) ?? "E_BLE_GATT", m.message));
        }
      });
      this.host.worker.postMessage({ id, type: "visit", ...request } satisfies GatewayRequest);
    });
  }

  async close(): Promise<void> {
    await this.host.close();
  }
}
