import { H4 } from "./constants.ts";

/** Header layout per H4 indicator: header length and where the payload length sits. */
const HEADERS: Record<
  number,
  { header: number; lengthAt: number; lengthBytes: 1 | 2; mask: number }
> = {
  // Vol 4 Part E §5.4.1 command: opcode(2) length(1)
  [H4.COMMAND]: { header: 3, lengthAt: 2, lengthBytes: 1, mask: 0xff },
  // §5.4.2 ACL: handle+flags(2) length(2)
  [H4.ACL]: { header: 4, lengthAt: 2, lengthBytes: 2, mask: 0xffff },
  // §5.4.3 synchronous: handle+flags(2) length(1)
  [H4.SCO]: { header: 3, lengthAt: 2, lengthBytes: 1, mask: 0xff },
  // §5.4.4 event: code(1) length(1)
  [H4.EVENT]: { header: 2, lengthAt: 1, lengthBytes: 1, mask: 0xff },
  // §5.4.5 ISO: handle+flags(2) length(2, 14 bits)
  [H4.ISO]: { header: 4, lengthAt: 2, lengthBytes: 2, mask: 0x3fff },
};

export interface H4FramerEvents {
  /** One whole packet, indicator byte first. */
  packet(packet: Buffer): void;
  /**
   * The stream lost sync at this byte: no packet type has it as indicator, or its packet's length
   * is out of range. Reported once per loss: the bytes after it are skipped silently until a
   * whole packet is found again.
   */
  desync(byte: number): void;
}

/** Largest payload the receiving side takes, per H4 indicator (absent: the field's range). */
export type H4Limits = Partial<Record<number, number>>;

/**
 * Splits an H4 byte stream (UART transport, Vol 4 Part A §2; HCI over TCP as rootcanal and Bumble
 * speak it) into packets, whatever the chunking. A byte that starts no packet — an unknown
 * indicator, or a length past `limits` (Vol 4 Part A §3: a length out of range is a loss of
 * sync) — is reported and skipped, so garbage costs its own bytes, never the stream; a run of
 * garbage is reported once, not once a byte.
 */
export class H4Framer {
  private pending: Buffer = Buffer.alloc(0);
  private synced = true;

  constructor(
    private readonly on: H4FramerEvents,
    private readonly limits: H4Limits = {},
  ) {}

  push(chunk: Uint8Array): void {
    this.pending =
      this.pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.pending, chunk]);
    for (;;) {
      if (this.pending.length === 0) return;
      const indicator = this.pending[0]!;
      const layout = HEADERS[indicator];
      if (layout === undefined) {
        this.skip(indicator);
        continue;
      }
      if (this.pending.length < 1 + layout.header) return;
      const at = 1 + layout.lengthAt;
      const length =
        (layout.lengthBytes === 1 ? this.pending[at]! : this.pending.readUInt16LE(at)) &
        layout.mask;
      if (length > (this.limits[indicator] ?? layout.mask)) {
        this.skip(indicator);
        continue;
      }
      const total = 1 + layout.header + length;
      if (this.pending.length < total) return;
      const packet = Buffer.from(this.pending.subarray(0, total));
      this.pending = this.pending.subarray(total);
      this.synced = true;
      this.on.packet(packet);
    }
  }

  /** Bytes held while waiting for the rest of a packet. */
  get buffered(): number {
    return this.pending.length;
  }

  private skip(byte: number): void {
    this.pending = this.pending.subarray(1);
    if (!this.synced) return;
    this.synced = false;
    this.on.desync(byte);
  }
}
