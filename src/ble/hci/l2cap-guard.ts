import { H4 } from "./constants.ts";

/** What to do with an ACL packet from the controller before the host stack reads it. */
export type GuardVerdict =
  | { readonly deliver: true }
  | { readonly deliver: false; readonly reply: Buffer | undefined };

const DELIVER: GuardVerdict = { deliver: true };
const DROP: GuardVerdict = { deliver: false, reply: undefined };

/** L2CAP fixed channels on LE-U (Vol 3 Part A §2.1): ATT, LE signaling, SMP. */
const ATT_CID = 0x0004;
const SIGNALING_CID = 0x0005;
const SMP_CID = 0x0006;
/** ACL Packet_Boundary_Flag of a first (start) fragment from the controller (Vol 4 Part E §5.4.2). */
const PB_START = 0b10;
/** ATT Error Response and the codes used here (Vol 3 Part F §3.4.1.1). */
const ERROR_RESPONSE = 0x01;
const INVALID_HANDLE = 0x01;
const INVALID_PDU = 0x04;
/** Bit 6 of an ATT opcode: a command, which is never answered (Vol 3 Part F §3.3.1). */
const COMMAND_FLAG = 0x40;

/**
 * The length of each ATT PDU a host parses (opcode included; Vol 3 Part F §3.4): a number is the
 * least length of a PDU that ends in a field of variable length, a list the only lengths of one
 * without. Requests of a server, then what a client receives. Read By Type and Read By Group
 * Type carry a 16- or 128-bit UUID: exactly 7 or 21 octets. Exchange MTU, Find Information, Read,
 * Read Blob and Execute Write have fixed fields only: an octet more is Invalid PDU, as BlueZ's
 * gatt-server answers it (the hosts read the fields they knew and answered the rest away).
 */
const REQUESTS = new Map<number, number | readonly number[]>([
  [0x02, [3]], // Exchange MTU Request
  [0x04, [5]], // Find Information Request
  [0x06, 7], // Find By Type Value Request
  [0x08, [7, 21]], // Read By Type Request
  [0x0a, [3]], // Read Request
  [0x0c, [5]], // Read Blob Request
  [0x0e, 5], // Read Multiple Request
  [0x10, [7, 21]], // Read By Group Type Request
  [0x12, 3], // Write Request
  [0x16, 5], // Prepare Write Request
  [0x18, [2]], // Execute Write Request
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
 * The checks noble and bleno leave out, made before they read an L2CAP PDU from the air: both
 * read fields past the end of a truncated PDU and throw, which loses it unanswered (the peer
 * waits out its transaction timeout: 30 s for ATT, Vol 3 Part F §3.3.3) or, on hci:N, the
 * process. Each fixed channel is answered in its own protocol's terms (attCheck, signalingCheck,
 * smpCheck). Fragmented PDUs, other channels and HCI events pass untouched. With
 * `kernelSignaling` (a raw socket on a real Linux adapter) the kernel answers LE signaling
 * itself, and the guard only where the kernel does not.
 */
export function guardFromAir(packet: Buffer, kernelSignaling = false): GuardVerdict {
  if (packet[0] !== H4.ACL || packet.length < 9) return DELIVER;
  const handleAndFlags = packet.readUInt16LE(1);
  if (handleAndFlags >> 12 !== PB_START) return DELIVER;
  const pdu = packet.subarray(9);
  if (packet.readUInt16LE(5) !== pdu.length) return DELIVER;
  const reply = (cid: number, payload: readonly number[]) => frame(handleAndFlags, cid, payload);
  switch (packet.readUInt16LE(7)) {
    case ATT_CID:
      return attCheck(pdu, reply);
    case SIGNALING_CID:
      return signalingCheck(pdu, reply, kernelSignaling);
    case SMP_CID:
      return smpCheck(pdu, reply);
    default:
      return DELIVER;
  }
}

type Reply = (cid: number, payload: readonly number[]) => GuardVerdict;

/**
 * ATT (Vol 3 Part F): a request too short for its fields is answered Invalid PDU, one whose
 * handle range starts at 0 or ends before it starts Invalid Handle; anything else too short, or
 * a command the host does not know, is dropped unanswered as §3.3 asks.
 */
function attCheck(pdu: Buffer, reply: Reply): GuardVerdict {
  if (pdu.length === 0) return DROP;
  const opcode = pdu[0]!;
  const error = (handle: number, code: number) =>
    reply(ATT_CID, [ERROR_RESPONSE, opcode, handle & 0xff, handle >> 8, code]);
  const request = REQUESTS.get(opcode);
  if (request !== undefined) {
    const fits = typeof request === "number" ? pdu.length >= request : request.includes(pdu.length);
    if (!fits) return error(0x0000, INVALID_PDU);
    if (RANGED.has(opcode)) {
      const start = pdu.readUInt16LE(1);
      if (start === 0 || start > pdu.readUInt16LE(3)) return error(start, INVALID_HANDLE);
    }
    return DELIVER;
  }
  const least = OTHERS.get(opcode);
  if (least === undefined) return opcode & COMMAND_FLAG ? DROP : DELIVER;
  return pdu.length >= least && listFits(opcode, pdu) ? DELIVER : DROP;
}

/**
 * Whether a response that carries a list of equal-size entries holds a whole number of them, of
 * a size its fields fit in (Vol 3 Part F §3.4.3.2, §3.4.4.2, §3.4.4.10). noble divides the
 * list's length by the size: a Length of 0 made its loop endless (the gateway hung), any other
 * misfit read past the end and threw.
 */
function listFits(opcode: number, pdu: Buffer): boolean {
  let size: number;
  if (opcode === 0x05)
    size = pdu[1] === 0x01 ? 4 : pdu[1] === 0x02 ? 18 : 0; // Find Information
  else if (opcode === 0x09)
    size = pdu[1]! >= 2 ? pdu[1]! : 0; // Read By Type: handle, value
  else if (opcode === 0x11)
    size = pdu[1]! >= 4 ? pdu[1]! : 0; // Read By Group Type: 2 handles, value
  else return true;
  return size > 0 && pdu.length > 2 && (pdu.length - 2) % size === 0;
}

/** LE signaling codes (Vol 3 Part A §4): the one request the stacks take, and its response. */
const CONNECTION_PARAMETER_UPDATE_REQUEST = 0x12;
const CONNECTION_PARAMETER_UPDATE_RESPONSE = 0x13;
/** Responses and indications: never answered (Command Reject, Disconnection, credit based). */
const SIGNALING_ANSWERS = new Set([0x01, 0x07, 0x15, 0x16, 0x18, 0x1a]);

/**
 * LE signaling (Vol 3 Part A §4): a Connection Parameter Update Request (its 8 octets, §4.20)
 * goes on to the host (the Linux kernel, or the emulated one, answers it for a raw-mode host:
 * socket/le-signaling.ts) and bleno takes its Response; neither stack knows any other command,
 * so every other request — or one whose length is wrong — gets Command Reject, "command not understood"
 * (§4.1), instead of leaving the peer to its RTX timeout. Answers to requests never made, and
 * PDUs too short for a header, are dropped. Where the kernel answers (`kernel`: a raw socket on
 * hci:N), a request whose header is whole (its length that of the data, its identifier not 0)
 * is its to answer (net/bluetooth/l2cap_core.c, l2cap_le_sig_channel: Command Reject for what
 * it does not take), and a second Command Reject from here answered one request twice; the
 * kernel drops the rest, which are answered here as above.
 */
function signalingCheck(pdu: Buffer, reply: Reply, kernel: boolean): GuardVerdict {
  if (pdu.length < 4) return DROP;
  const [code, identifier] = [pdu[0]!, pdu[1]!];
  const length = pdu.readUInt16LE(2);
  const reject = () => reply(SIGNALING_CID, [0x01, identifier, 0x02, 0x00, 0x00, 0x00]);
  if (code === CONNECTION_PARAMETER_UPDATE_RESPONSE) {
    return length === 2 && pdu.length === 6 ? DELIVER : DROP;
  }
  if (SIGNALING_ANSWERS.has(code)) return DROP;
  if (code === CONNECTION_PARAMETER_UPDATE_REQUEST && length === 8 && pdu.length === 12) {
    return DELIVER;
  }
  if (kernel && length === pdu.length - 4 && identifier !== 0) return DROP;
  return reject();
}

/** SMP command lengths, code included (Vol 3 Part H §3.5, §3.6). */
const SMP_LENGTHS = new Map([
  [0x01, 7], // Pairing Request
  [0x02, 7], // Pairing Response
  [0x03, 17], // Pairing Confirm
  [0x04, 17], // Pairing Random
  [0x05, 2], // Pairing Failed
  [0x06, 17], // Encryption Information
  [0x07, 11], // Central Identification
  [0x08, 17], // Identity Information
  [0x09, 8], // Identity Address Information
  [0x0a, 17], // Signing Information
  [0x0b, 2], // Security Request
  [0x0c, 65], // Pairing Public Key
  [0x0d, 17], // Pairing DHKey Check
  [0x0e, 2], // Pairing Keypress Notification
]);
const PAIRING_FAILED = 0x05;
const COMMAND_NOT_SUPPORTED = 0x07;
const INVALID_PARAMETERS = 0x0a;

/**
 * SMP (Vol 3 Part H §3.5.5): a command of the wrong length fails pairing with Invalid
 * Parameters, an unknown one with Command Not Supported; a malformed Pairing Failed is dropped.
 */
function smpCheck(pdu: Buffer, reply: Reply): GuardVerdict {
  if (pdu.length === 0) return DROP;
  const code = pdu[0]!;
  const length = SMP_LENGTHS.get(code);
  if (length === pdu.length) return DELIVER;
  if (code === PAIRING_FAILED) return DROP;
  const reason = length === undefined ? COMMAND_NOT_SUPPORTED : INVALID_PARAMETERS;
  return reply(SMP_CID, [PAIRING_FAILED, reason]);
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

/** A one-fragment L2CAP PDU on the same connection, as bleno frames its own (start, not flushable). */
function frame(handleAndFlags: number, cid: number, payload: readonly number[]): GuardVerdict {
  return { deliver: false, reply: l2capPacket(handleAndFlags & 0x0fff, cid, payload) };
}

/** An H4 ACL packet from a host carrying one whole L2CAP PDU (first, not flushable: PB 0b00). */
export function l2capPacket(handle: number, cid: number, payload: readonly number[]): Buffer {
  const packet = Buffer.alloc(9 + payload.length);
  packet[0] = H4.ACL;
  packet.writeUInt16LE(handle & 0x0fff, 1);
  packet.writeUInt16LE(4 + payload.length, 3);
  packet.writeUInt16LE(payload.length, 5);
  packet.writeUInt16LE(cid, 7);
  packet.set(payload, 9);
  return packet;
}
