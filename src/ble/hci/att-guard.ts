import { H4 } from "./constants.ts";

/** What to do with an ACL packet from the controller before the host stack reads it. */
export type AttVerdict =
  | { readonly deliver: true }
  | { readonly deliver: false; readonly reply: Buffer | undefined };

const DELIVER: AttVerdict = { deliver: true };
const DROP: AttVerdict = { deliver: false, reply: undefined };

/** L2CAP fixed channel of ATT on LE-U (Vol 3 Part A §2.1). */
const ATT_CID = 0x0004;
/** ACL Packet_Boundary_Flag of a first (start) fragment from the controller (Vol 4 Part E §5.4.2). */
const PB_START = 0b10;
/** ATT Error Response and the codes used here (Vol 3 Part F §3.4.1.1). */
const ERROR_RESPONSE = 0x01;
const INVALID_HANDLE = 0x01;
const INVALID_PDU = 0x04;
/** Bit 6 of an ATT opcode: a command, which is never answered (Vol 3 Part F §3.3.1). */
const COMMAND_FLAG = 0x40;

/**
 * The least length of each ATT PDU a host parses (opcode included; Vol 3 Part F §3.4). Requests
 * of a server, then what a client receives. Read By Type and Read By Group Type carry a 16- or
 * 128-bit UUID: exactly 7 or 21 octets.
 */
const REQUESTS = new Map<number, number | readonly number[]>([
  [0x02, 3], // Exchange MTU Request
  [0x04, 5], // Find Information Request
  [0x06, 7], // Find By Type Value Request
  [0x08, [7, 21]], // Read By Type Request
  [0x0a, 3], // Read Request
  [0x0c, 5], // Read Blob Request
  [0x0e, 5], // Read Multiple Request
  [0x10, [7, 21]], // Read By Group Type Request
  [0x12, 3], // Write Request
  [0x16, 5], // Prepare Write Request
  [0x18, 2], // Execute Write Request
  [0x20, 5], // Read Multiple Variable Request
]);
const OTHERS = new Map<number, number>([
  [0x01, 5], // Error Response
  [0x03, 3], // Exchange MTU Response
  [0x05, 2], // Find Information Response
  [0x09, 2], // Read By Type Response
  [0x11, 2], // Read By Group Type Response
  [0x17, 5], // Prepare Write Response
  [0x1b, 3], // Handle Value Notification
  [0x1d, 3], // Handle Value Indication
  [0x52, 3], // Write Command
  // Signed Write Command (0xD2) is not here: neither host supports it, so it is dropped as an
  // unknown command rather than answered.
]);
/** Requests whose first field is a handle range (Vol 3 Part F §3.4.3.1, 3.4.3.3, 3.4.4.1, 3.4.4.9). */
const RANGED = new Set([0x04, 0x06, 0x08, 0x10]);

/**
 * The ATT checks bleno and noble leave out, made before they read a PDU from the air: both read
 * fields past the end of a truncated PDU and throw, which loses the request unanswered (the peer
 * waits out its 30 s ATT transaction timeout, Vol 3 Part F §3.3.3) or, on hci:N, the process.
 * A request too short for its fields is answered Invalid PDU, one whose handle range starts at 0
 * or ends before it starts is answered Invalid Handle, and anything else too short, or a command
 * the host does not know, is dropped unanswered as §3.3 asks. Fragmented PDUs and other
 * channels pass untouched.
 */
export function guardAtt(packet: Buffer): AttVerdict {
  if (packet[0] !== H4.ACL || packet.length < 9) return DELIVER;
  const handleAndFlags = packet.readUInt16LE(1);
  if (handleAndFlags >> 12 !== PB_START) return DELIVER;
  const pdu = packet.subarray(9);
  if (packet.readUInt16LE(7) !== ATT_CID || packet.readUInt16LE(5) !== pdu.length) return DELIVER;
  if (pdu.length === 0) return DROP;
  const opcode = pdu[0]!;
  const request = REQUESTS.get(opcode);
  if (request !== undefined) {
    const fits = typeof request === "number" ? pdu.length >= request : request.includes(pdu.length);
    if (!fits) return answer(handleAndFlags, opcode, 0x0000, INVALID_PDU);
    if (RANGED.has(opcode)) {
      const start = pdu.readUInt16LE(1);
      if (start === 0 || start > pdu.readUInt16LE(3)) {
        return answer(handleAndFlags, opcode, start, INVALID_HANDLE);
      }
    }
    return DELIVER;
  }
  const least = OTHERS.get(opcode);
  if (least === undefined) return opcode & COMMAND_FLAG ? DROP : DELIVER;
  return pdu.length >= least ? DELIVER : DROP;
}

/**
 * Whether a packet a host writes is an Error Response to a command — bleno answers a Write
 * Command to a handle it does not have — which must not be sent: a command is never answered
 * (Vol 3 Part F §3.3.1, §3.4.5.3).
 */
export function answersCommand(packet: Buffer): boolean {
  if (packet[0] !== H4.ACL || packet.length < 11) return false;
  // A host's first fragment: start, flushable or not (Vol 4 Part E §5.4.2).
  if ((packet.readUInt16LE(1) >> 12) & 0b01) return false;
  const pdu = packet.subarray(9);
  return (
    packet.readUInt16LE(7) === ATT_CID &&
    packet.readUInt16LE(5) === pdu.length &&
    pdu[0] === ERROR_RESPONSE &&
    (pdu[1]! & COMMAND_FLAG) !== 0
  );
}

/** An Error Response on the same connection, as bleno frames its own (start, not flushable). */
function answer(handleAndFlags: number, opcode: number, handle: number, code: number): AttVerdict {
  const reply = Buffer.alloc(14);
  reply[0] = H4.ACL;
  reply.writeUInt16LE(handleAndFlags & 0x0fff, 1);
  reply.writeUInt16LE(9, 3);
  reply.writeUInt16LE(5, 5);
  reply.writeUInt16LE(ATT_CID, 7);
  reply[9] = ERROR_RESPONSE;
  reply[10] = opcode;
  reply.writeUInt16LE(handle, 11);
  reply[13] = code;
  return { deliver: false, reply };
}
