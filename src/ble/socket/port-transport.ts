import type { MessagePort } from "node:worker_threads";
import type { VirtualController } from "../controller/virtual-controller.ts";
import type { HciTransport } from "./transport.ts";

/**
 * H4 packets over a MessagePort: the host stack runs in a worker thread (one bleno per worker,
 * since bleno is a singleton per module instance), its controller in the lab's thread.
 */
export class PortTransport implements HciTransport {
  private onMessage: ((data: Uint8Array) => void) | undefined;

  constructor(private readonly port: MessagePort) {}

  send(packet: Buffer): void {
    this.port.postMessage(packet);
  }

  setReceiver(receiver: (packet: Buffer) => void): void {
    if (this.onMessage !== undefined) this.port.off("message", this.onMessage);
    this.onMessage = (data) => receiver(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    this.port.on("message", this.onMessage);
  }

  close(): void {
    if (this.onMessage !== undefined) this.port.off("message", this.onMessage);
    this.port.close();
  }
}

/** The lab's end of a PortTransport: the port's packets go into the controller and back. */
export function bridgePort(port: MessagePort, controller: VirtualController): () => void {
  const onMessage = (data: Uint8Array): void =>
    controller.receive(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  port.on("message", onMessage);
  const detach = controller.attach((packet) => port.postMessage(packet));
  return () => {
    detach();
    port.off("message", onMessage);
    port.close();
  };
}
