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
  /** An indicator byte that no packet type has: the stream lost sync at that byte. */
  desync(byte: number): void;
}

/**
 * Splits an H4 byte stream (UART transport, Vol 4 Part A §2; HCI over TCP as rootcanal and Bumble
 * speak it) into packets, whatever the chunking. An unknown indicator is reported and skipped,
 * so one bad byte costs that byte, never the stream.
 */
export class H4Framer {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly on: H4FramerEvents) {}

  push(chunk: Uint8Array): void {
    this.pending =
      this.pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.pending, chunk]);
    for (;;) {
      if (this.pending.length === 0) return;
      const indicator = this.pending[0]!;
      const layout = HEADERS[indicator];
      if (layout === undefined) {
        this.pending = this.pending.subarray(1);
        this.on.desync(indicator);
        continue;
      }
      if (this.pending.length < 1 + layout.header) return;
      const at = 1 + layout.lengthAt;
      const length =
        (layout.lengthBytes === 1 ? this.pending[at]! : this.pending.readUInt16LE(at)) &
        layout.mask;
      const total = 1 + layout.header + length;
      if (this.pending.length < total) return;
      const packet = Buffer.from(this.pending.subarray(0, total));
      this.pending = this.pending.subarray(total);
      this.on.packet(packet);
    }
  }

  /** Bytes held while waiting for the rest of a packet. */
  get buffered(): number {
    return this.pending.length;
  }
}
