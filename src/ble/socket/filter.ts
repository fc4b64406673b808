import { EVT, H4 } from "../hci/constants.ts";

/**
 * Linux's struct hci_filter as a raw HCI socket applies it (net/bluetooth/hci_sock.c,
 * is_filtered_packet): a packet-type bit mask, a 64-bit event mask, and an opcode that limits
 * Command Complete/Status to one command. A new raw socket's filter is empty: it receives
 * nothing until the host sets one, as noble and bleno do.
 */
export class HciFilter {
  private typeMask = 0;
  private eventMask = 0n;
  private opcode = 0;

  /** HCI_FILTER sockopt bytes: type_mask u32, event_mask u32[2], opcode u16 (little-endian). */
  set(bytes: Uint8Array): void {
    if (bytes.length < 14) return;
    const b = Buffer.from(bytes);
    this.typeMask = b.readUInt32LE(0);
    this.eventMask = BigInt(b.readUInt32LE(4)) | (BigInt(b.readUInt32LE(8)) << 32n);
    this.opcode = b.readUInt16LE(12);
  }

  /** Whether a raw socket with this filter receives the packet. */
  passes(packet: Buffer): boolean {
    const type = packet[0]!;
    if (type > 31 || ((this.typeMask >>> type) & 1) === 0) return false;
    if (type !== H4.EVENT) return true;
    const code = packet[1]!;
    if (code > 63 || ((this.eventMask >> BigInt(code)) & 1n) === 0n) return false;
    if (this.opcode === 0) return true;
    if (code === EVT.COMMAND_COMPLETE)
      return packet.length >= 6 && packet.readUInt16LE(4) === this.opcode;
    if (code === EVT.COMMAND_STATUS)
      return packet.length >= 7 && packet.readUInt16LE(5) === this.opcode;
    return true;
  }
}
