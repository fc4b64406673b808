import { H4, PB } from "../hci/constants.ts";

/** An HCI ACL Data packet header (Vol 4 Part E §5.4.2), read from an H4 packet. */
export interface AclHeader {
  handle: number;
  /** Packet_Boundary_Flag. */
  pb: number;
  /** Broadcast_Flag. */
  bc: number;
  data: Buffer;
}

/** Reads an H4 ACL packet; undefined when its length field does not match the bytes. */
export function readAcl(packet: Buffer): AclHeader | undefined {
  if (packet.length < 5 || packet[0] !== H4.ACL) return undefined;
  const word = packet.readUInt16LE(1);
  const length = packet.readUInt16LE(3);
  if (packet.length !== 5 + length) return undefined;
  return {
    handle: word & 0x0fff,
    pb: (word >> 12) & 0b11,
    bc: (word >> 14) & 0b11,
    data: packet.subarray(5),
  };
}

export function aclPacket(handle: number, pb: number, data: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + data.length);
  out[0] = H4.ACL;
  out.writeUInt16LE((handle & 0x0fff) | (pb << 12), 1);
  out.writeUInt16LE(data.length, 3);
  out.set(data, 5);
  return out;
}

/**
 * Splits one L2CAP PDU into HCI ACL packets of at most `size` octets of data: the first with
 * "first automatically flushable" (0b10, what a controller uses toward its host), the rest with
 * "continuing fragment" (0b01) (Vol 4 Part E §5.4.2; Vol 3 Part A §7.2).
 */
export function fragmentToHost(handle: number, pdu: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let offset = 0; offset < pdu.length || offset === 0; offset += size) {
    out.push(
      aclPacket(
        handle,
        offset === 0 ? PB.FIRST_FLUSHABLE : PB.CONTINUING,
        pdu.subarray(offset, offset + size),
      ),
    );
    if (pdu.length === 0) break;
  }
  return out;
}

/**
 * Reassembles L2CAP PDUs from Link Layer data PDUs: LLID 0b10 starts a PDU, 0b01 continues it
 * (Vol 6 Part B §2.4). The Basic L2CAP header's length says when it is whole (Vol 3 Part A
 * §3.1). A start while a PDU is incomplete drops the incomplete one (Vol 3 Part A §7.2.2), as
 * does a continuation with nothing started or one that overruns the length.
 */
export class L2capReassembler {
  private parts: Buffer[] = [];
  private have = 0;
  /** PDUs dropped as malformed. */
  dropped = 0;

  /** Returns each PDU completed by this fragment (zero or one). */
  push(llid: 1 | 2, bytes: Buffer): Buffer | undefined {
    if (llid === 2) {
      if (this.have > 0) this.dropped++;
      this.parts = [bytes];
      this.have = bytes.length;
    } else {
      if (this.have === 0) {
        this.dropped++;
        return undefined;
      }
      this.parts.push(bytes);
      this.have += bytes.length;
    }
    if (this.have < 4) return undefined;
    const head = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    const total = 4 + head.readUInt16LE(0);
    if (this.have < total) return undefined;
    this.parts = [];
    this.have = 0;
    if (head.length > total) {
      this.dropped++;
      return undefined;
    }
    return head;
  }

  reset(): void {
    this.parts = [];
    this.have = 0;
  }
}
