import { closeSync, openSync, writeSync } from "node:fs";
import { RpmlabError } from "../core/errors.ts";
import type { Direction } from "./controller/virtual-controller.ts";
import { bdAddrToWire } from "./hci/address.ts";
import { H4 } from "./hci/constants.ts";

/**
 * btsnoop capture in the BlueZ monitor format (datalink 2001), which btmon writes and reads
 * (`btmon -r FILE`) and Wireshark/tshark dissect as "Bluetooth Linux Monitor": one file holds
 * every controller's traffic, each packet tagged with its controller's index, as hci0, hci1…
 *
 * File: "btsnoop\0", version 1, datalink 2001 (all big-endian). Record: original length,
 * included length, flags (controller index << 16 | monitor opcode), cumulative drops, timestamp
 * (µs since 0000-01-01, i.e. Unix µs + 0x00dcddb30f2f8000). Opcodes from BlueZ
 * src/shared/btsnoop.h: 0 New Index, 1 Delete Index, 2 Command, 3 Event, 4 ACL TX, 5 ACL RX,
 * 6 SCO TX, 7 SCO RX, 18 ISO TX, 19 ISO RX. Payloads carry no H4 indicator.
 */
const DATALINK_MONITOR = 2001;
const EPOCH_DELTA_US = 0x00dcddb30f2f8000n;
const OP_NEW_INDEX = 0;
const OP_DELETE_INDEX = 1;

/** Monitor opcode for an H4 packet in a direction, or undefined for what the monitor does not carry. */
function opcodeOf(direction: Direction, indicator: number): number | undefined {
  const tx = direction === "host-to-controller";
  switch (indicator) {
    case H4.COMMAND:
      return tx ? 2 : undefined;
    case H4.EVENT:
      return tx ? undefined : 3;
    case H4.ACL:
      return tx ? 4 : 5;
    case H4.SCO:
      return tx ? 6 : 7;
    case H4.ISO:
      return tx ? 18 : 19;
    default:
      return undefined;
  }
}

/** Where records go: a file, or memory for tests. */
export interface CaptureSink {
  write(bytes: Buffer): void;
  /** Everything written so far reaches its destination before close returns; nothing after. */
  close(): void;
}

/**
 * Records gathered before one write(2): a month-long scenario run on emulated BLE captures
 * millions of records, and a write per record is most of the capture's cost.
 */
const FILE_BUFFER_BYTES = 64 * 1024;

/**
 * A btsnoop file. Records are buffered and written when the buffer is full, on close, and on the
 * event loop's next turn after a burst (setImmediate, not a timer: a live capture tailed by
 * Wireshark sees a burst as soon as the lab stops to wait for I/O; nothing waits on wall-clock
 * time, so a virtual-time run stays deterministic, and the process is held one turn at most).
 * A write that fails is reported by close, naming the file; records after it are dropped, so a
 * full disk does not crash the lab from inside a deferred flush.
 */
export function fileSink(path: string): CaptureSink {
  let fd: number;
  try {
    fd = openSync(path, "w");
  } catch (error) {
    throw new RpmlabError(
      "E_CAPTURE_WRITE",
      `btsnoop capture ${path}: cannot be opened for writing: ${(error as Error).message}`,
      { field: "btsnoop", value: path },
      error,
    );
  }
  const buffer = Buffer.allocUnsafe(FILE_BUFFER_BYTES);
  let used = 0;
  let pending: NodeJS.Immediate | undefined;
  let failure: unknown;
  let closed = false;
  const writeAll = (bytes: Buffer): void => {
    if (failure !== undefined) return;
    try {
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    } catch (error) {
      failure = error;
    }
  };
  const flush = (): void => {
    if (pending !== undefined) clearImmediate(pending);
    pending = undefined;
    if (used > 0) writeAll(buffer.subarray(0, used));
    used = 0;
  };
  return {
    write(bytes) {
      if (closed) return;
      if (used + bytes.length > buffer.length) flush();
      if (bytes.length >= buffer.length) {
        writeAll(bytes);
        return;
      }
      bytes.copy(buffer, used);
      used += bytes.length;
      pending ??= setImmediate(flush);
    },
    close() {
      if (closed) return;
      closed = true;
      flush();
      closeSync(fd);
      if (failure !== undefined) {
        const reason = failure instanceof Error ? failure.message : String(failure);
        throw new RpmlabError(
          "E_CAPTURE_WRITE",
          `btsnoop capture ${path}: records lost, a write failed: ${reason}`,
          { field: "btsnoop", value: path },
          failure,
        );
      }
    },
  };
}

/** Anything whose HCI traffic can be watched: a VirtualController, or a host-side adapter. */
export interface HciTap {
  readonly name: string;
  readonly address: string;
  tap(listener: (direction: Direction, packet: Buffer) => void): () => void;
}

export class BtsnoopWriter {
  private readonly detach = new Map<HciTap, { index: number; off: () => void }>();
  private nextIndex = 0;
  private closed = false;
  private failure: unknown;

  constructor(
    private readonly sink: CaptureSink,
    /** Unix time in ms for each record (the lab's Clock). */
    private readonly now: () => number,
  ) {
    const header = Buffer.alloc(16);
    header.write("btsnoop\0", 0, "latin1");
    header.writeUInt32BE(1, 8);
    header.writeUInt32BE(DATALINK_MONITOR, 12);
    sink.write(header);
  }

  /** Records a controller's traffic from now on, announced as a new index named after it. */
  add(controller: HciTap): number {
    const index = this.nextIndex++;
    // New Index payload: type (0 primary), bus (0 virtual), BD_ADDR, name (8 octets).
    const info = Buffer.alloc(16);
    info.set(bdAddrToWire(controller.address), 2);
    info.write(controller.name.slice(0, 8), 8, "latin1");
    this.record(index, OP_NEW_INDEX, info);
    const off = controller.tap((direction, packet) => {
      const op = opcodeOf(direction, packet[0] ?? 0);
      if (op !== undefined && packet.length > 1) this.record(index, op, packet.subarray(1));
    });
    this.detach.set(controller, { index, off });
    return index;
  }

  remove(controller: HciTap): void {
    const entry = this.detach.get(controller);
    if (entry === undefined) return;
    entry.off();
    this.detach.delete(controller);
    this.record(entry.index, OP_DELETE_INDEX, Buffer.alloc(0));
  }

  private record(index: number, opcode: number, payload: Buffer): void {
    if (this.closed) return;
    const head = Buffer.alloc(24);
    head.writeUInt32BE(payload.length, 0);
    head.writeUInt32BE(payload.length, 4);
    head.writeUInt32BE(((index & 0xffff) << 16) | opcode, 8);
    head.writeUInt32BE(0, 12);
    head.writeBigInt64BE(BigInt(Math.round(this.now() * 1000)) + EPOCH_DELTA_US, 16);
    this.sink.write(Buffer.concat([head, payload]));
  }

  /**
   * Ends the capture: a Delete Index for each controller, then the sink's close (the buffered
   * records reach the file). Safe to call again; a capture that could not be written throws at
   * every call, so the owner of a run learns of it even when something else closed it first.
   */
  close(): void {
    if (!this.closed) {
      for (const controller of [...this.detach.keys()]) this.remove(controller);
      this.closed = true;
      try {
        this.sink.close();
      } catch (error) {
        this.failure = error;
      }
    }
    if (this.failure !== undefined) throw this.failure;
  }
}
