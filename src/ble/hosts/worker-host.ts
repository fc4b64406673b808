import { MessageChannel, type MessagePort, parentPort, type Worker } from "node:worker_threads";
import { RpmlabError } from "../../core/errors.ts";
import { startTsWorker } from "../../core/ts-worker.ts";
import type { VirtualController } from "../controller/virtual-controller.ts";
import { EmulatedHciSocket } from "../socket/emulated-socket.ts";
import { HciAdapter } from "../socket/hci-adapter.ts";
import { bridgePort, PortTransport } from "../socket/port-transport.ts";
import type { SocketFactory } from "./load.ts";

/** First message to a host worker: the MessagePort its HCI socket talks over. */
interface HciPortMessage {
  readonly rpmlabHciPort: MessagePort;
}

const isHciPortMessage = (m: unknown): m is HciPortMessage =>
  typeof m === "object" && m !== null && "rpmlabHciPort" in m;

/**
 * A host stack (noble or bleno) in its own worker thread, its HCI socket bridged to a controller
 * in this thread over a MessagePort. Terminating the worker ends the stack and its poll timers,
 * which neither noble nor bleno can otherwise stop.
 */
export class HostWorker {
  private constructor(
    readonly worker: Worker,
    private readonly unbridge: () => void,
  ) {}

  static start(controller: VirtualController, module: URL, data: unknown): HostWorker {
    const { port1, port2 } = new MessageChannel();
    const unbridge = bridgePort(port1, controller);
    const worker = startTsWorker(module, data);
    worker.postMessage({ rpmlabHciPort: port2 } satisfies HciPortMessage, [port2]);
    return new HostWorker(worker, unbridge);
  }

  /** Ends the worker and the bridge; resolves when the thread has exited. */
  async close(): Promise<void> {
    this.unbridge();
    await this.worker.terminate();
  }
}

/**
 * Inside a host worker: waits for the HCI port and returns the socket factory for loadNoble or
 * loadBleno, plus the adapter (to close it).
 */
export function workerSockets(devId = 0): Promise<{ factory: SocketFactory; adapter: HciAdapter }> {
  const parent = parentPort;
  if (parent === null)
    return Promise.reject(new RpmlabError("E_USAGE", "workerSockets() runs only in a host worker"));
  return new Promise((resolve) => {
    const onMessage = (message: unknown): void => {
      if (!isHciPortMessage(message)) return;
      parent.off("message", onMessage);
      const adapter = new HciAdapter(devId, new PortTransport(message.rpmlabHciPort));
      resolve({ factory: () => new EmulatedHciSocket(adapter), adapter });
    };
    parent.on("message", onMessage);
  });
}
