import type { VirtualController } from "../controller/virtual-controller.ts";
import type { HciTransport } from "./transport.ts";

/** A host in the same thread as its controller. */
export class DirectTransport implements HciTransport {
  private detach: (() => void) | undefined;

  constructor(private readonly controller: VirtualController) {}

  send(packet: Buffer): void {
    this.controller.receive(packet);
  }

  setReceiver(receiver: (packet: Buffer) => void): void {
    this.detach?.();
    this.detach = this.controller.attach(receiver);
  }

  close(): void {
    this.detach?.();
    this.detach = undefined;
  }
}
