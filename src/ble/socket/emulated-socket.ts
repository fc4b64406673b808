import { EventEmitter } from "node:events";
import { HciFilter } from "./filter.ts";
import type { HciAdapter } from "./hci-adapter.ts";

export type Channel = "raw" | "user" | "control";

/** An Error with the errno code a native socket would carry. */
function errnoError(code: string, message: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message);
  error.code = code;
  return error;
}

/**
 * The object noble and bleno get for `new BluetoothHciSocket()` on every path but hci:N: the
 * same methods and events as @abandonware/bluetooth-hci-socket, over an HciAdapter. Packets
 * reach the host asynchronously, in order, as they would from a socket read.
 */
export class EmulatedHciSocket extends EventEmitter {
  channel: Channel | undefined;
  private readonly filter = new HciFilter();
  private started = false;
  private queue: Buffer[] = [];
  private flushing = false;

  constructor(private readonly adapter: HciAdapter) {
    super();
  }

  bindRaw(devId?: number): number {
    return this.bind("raw", devId);
  }

  bindUser(devId?: number): number {
    return this.bind("user", devId);
  }

  bindControl(): void {
    this.bind("control", undefined);
  }

  private bind(channel: Channel, devId: number | undefined): number {
    if (devId !== undefined && devId !== null && devId !== this.adapter.devId) {
      throw errnoError(
        "ENODEV",
        `No such device: hci${devId} (this host is bound to hci${this.adapter.devId})`,
      );
    }
    this.channel = channel;
    this.adapter.add(this);
    return this.adapter.devId;
  }

  isDevUp(): boolean {
    return this.adapter.isUp;
  }

  getDeviceList(): Array<{
    devId: number;
    devUp: boolean;
    idVendor: null;
    idProduct: null;
    busNumber: null;
    deviceAddress: null;
  }> {
    return [
      {
        devId: this.adapter.devId,
        devUp: this.adapter.isUp,
        idVendor: null,
        idProduct: null,
        busNumber: null,
        deviceAddress: null,
      },
    ];
  }

  setFilter(filter: Uint8Array): void {
    this.filter.set(filter);
  }

  start(): void {
    this.started = true;
    this.schedule();
  }

  stop(): void {
    this.started = false;
    this.queue = [];
  }

  write(data: Buffer): void {
    if (this.channel === undefined) {
      this.emit("error", errnoError("EBADFD", "write on an unbound HCI socket"));
      return;
    }
    if (!Buffer.isBuffer(data) || data.length === 0) {
      this.emit("error", errnoError("EINVAL", "HCI socket write needs a non-empty Buffer"));
      return;
    }
    if (this.channel === "control") this.adapter.mgmt(data, this);
    else this.adapter.fromHost(Buffer.from(data), this);
  }

  /** From the adapter: a packet for this socket if its filter lets it through. */
  deliverFiltered(packet: Buffer): void {
    if (this.filter.passes(packet)) this.deliver(packet);
  }

  deliver(packet: Buffer): void {
    if (!this.started) return;
    this.queue.push(packet);
    this.schedule();
  }

  fail(error: Error): void {
    if (this.listenerCount("error") > 0) this.emit("error", error);
  }

  private schedule(): void {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    queueMicrotask(() => {
      this.flushing = false;
      const batch = this.queue;
      this.queue = [];
      for (const packet of batch) {
        if (!this.started) return;
        try {
          this.emit("data", packet);
        } catch (error) {
          this.adapter.onHostError(error);
        }
      }
    });
  }
}
