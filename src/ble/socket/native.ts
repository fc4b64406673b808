import { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import { RpmlabError } from "../../core/errors.ts";
import { FragmentGuard } from "../hci/fragment-guard.ts";
import { answersCommand } from "../hci/l2cap-guard.ts";

const require = createRequire(import.meta.url);

/** The native socket's API (as @abandonware/bluetooth-hci-socket implements it). */
export interface NativeSocket extends EventEmitter {
  bindRaw(devId?: number): number;
  bindUser(devId?: number): number;
  bindControl(): void;
  isDevUp(): boolean;
  setFilter(filter: Buffer): void;
  start(): void;
  stop(): void;
  write(data: Buffer): void;
  getDeviceList(): unknown[];
}

/**
 * The real adapter hciN: the native @abandonware/bluetooth-hci-socket, installed under the alias
 * @rpmlab/native-hci-socket (optional dependency: it needs a compiler to build and Linux with
 * Bluetooth to run). The wrapper pins the adapter number, since bleno takes it only from its
 * environment; it fails with E_BLE_NO_ADAPTER, saying why, when the module or the kernel's
 * Bluetooth is missing.
 */
export function nativeSocketFactory(devId: number): () => object {
  let Native: new () => NativeSocket;
  try {
    Native = require("@rpmlab/native-hci-socket") as new () => NativeSocket;
  } catch (error) {
    throw new RpmlabError(
      "E_BLE_NO_ADAPTER",
      `hci:${devId} needs the native HCI socket (npm optional dependency @rpmlab/native-hci-socket, built with node-gyp): ${(error as Error).message}`,
      {},
      error,
    );
  }
  return () => {
    let native: NativeSocket;
    try {
      native = new Native();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === "EAFNOSUPPORT"
          ? "this kernel has no Bluetooth (EAFNOSUPPORT)"
          : (error as Error).message;
      throw new RpmlabError("E_BLE_NO_ADAPTER", `hci:${devId}: ${why}`, {}, error);
    }
    return new PinnedSocket(native, devId);
  };
}

/**
 * Forwards everything to the native socket, binding always to one adapter. A host stack that
 * throws on a packet (bleno on a truncated ATT PDU from the air) loses that packet, as on the
 * emulated socket, instead of the process: the native addon calls back with no try/catch.
 */
export class PinnedSocket extends EventEmitter {
  /** Exceptions a host threw while handling a packet: its bug, reported not thrown. */
  onHostError: (error: unknown) => void = () => {};
  /** Bound to the management channel, where each command names its adapter in its header. */
  private control = false;
  /** Bound as a raw socket: the kernel runs its L2CAP on the adapter's links. */
  private raw = false;

  constructor(
    private readonly native: NativeSocket,
    private readonly devId: number,
  ) {
    super();
    // On a raw socket Linux's own L2CAP answers LE signaling; on the user channel no kernel does.
    const guard = new FragmentGuard(() => this.raw);
    native.on("data", (d: Buffer) => {
      const { deliver, reply } = guard.take(d);
      if (reply !== undefined) native.write(reply);
      for (const packet of deliver) {
        try {
          this.emit("data", packet);
        } catch (error) {
          this.onHostError(error);
        }
      }
    });
    native.on("error", (e: Error) => this.emit("error", e));
  }
  bindRaw(): number {
    this.raw = true;
    return this.native.bindRaw(this.devId);
  }
  bindUser(): number {
    this.raw = false;
    return this.native.bindUser(this.devId);
  }
  bindControl(): void {
    this.control = true;
    this.native.bindControl();
  }
  isDevUp(): boolean {
    return this.native.isDevUp();
  }
  setFilter(filter: Buffer): void {
    this.native.setFilter(filter);
  }
  start(): void {
    this.native.start();
  }
  stop(): void {
    this.native.stop();
  }
  write(data: Buffer): void {
    if (this.control) {
      this.native.write(pinnedMgmtCommand(data, this.devId));
      return;
    }
    if (answersCommand(data)) return;
    this.native.write(data);
  }
  getDeviceList(): unknown[] {
    return this.native.getDeviceList();
  }
}

/** The index of a management command meant for no adapter (mgmt-api.txt). */
const MGMT_INDEX_NONE = 0xffff;

/**
 * A management command addressed to adapter `devId`: bleno writes its Load Long Term Keys for
 * index 0 whatever adapter it runs on (lib/hci-socket/mgmt.js), so on hci:1 its keys went to
 * hci0 (Invalid Index without one) and hci1's kernel, finding no key at the LE Long Term Key
 * Request, refused encryption: no virtual device paired there. Commands for no adapter stay so.
 */
export function pinnedMgmtCommand(command: Buffer, devId: number): Buffer {
  if (command.length < 6 || command.readUInt16LE(2) === MGMT_INDEX_NONE) return command;
  const pinned = Buffer.from(command);
  pinned.writeUInt16LE(devId, 2);
  return pinned;
}
