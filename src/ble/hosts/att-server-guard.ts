import { exchangeMtu, type MtuExchanges } from "./att-mtu-exchange.ts";
import { executeWrite, type PrepareQueues, prepareWrite } from "./att-prepare-queue.ts";
import { readByGroupTypeRefusal, readByType, withShortType } from "./att-read-by-type.ts";
import {
  ATT_ERROR,
  ATT_OP,
  type BlenoGatt,
  type BlenoHandle,
  cccdAllowed,
  errorResponse,
  isCccd,
} from "./bleno-gatt.ts";

/** What the guard does with a request: see attServerCheck. */
export type AttServerAnswer =
  | Buffer
  | null
  | undefined
  | { readonly writes: Buffer[] }
  | { readonly request: Buffer };

/**
 * What bleno's GATT server gets wrong, answered before it reads a request (the L2CAP guard has
 * already checked lengths):
 * - a Write Request to a service or characteristic declaration reaches the characteristic's
 *   write handler (a declaration is read-only: Write Not Permitted, §3.4.5.1, Vol 3 Part G
 *   §3.3.1), and a Write Command to one is dropped, not written;
 * - Prepare Write and Execute Write Requests: the prepare queue is the guard's
 *   (att-prepare-queue.ts), as bleno checked offsets too early, queued one attribute only, and
 *   answered a Prepare Write to a CCCD with Attribute Not Long (a code §3.4.1.1 defines for
 *   Read Blob only); an Execute Write Request with reserved flags (0x02–0xFF) is Invalid PDU
 *   (bleno: Unlikely Error), one with nothing prepared an Execute Write Response, as BlueZ's
 *   gatt-server answers both;
 * - a CCCD takes the Notification bit on a characteristic that only indicates (and Indication on
 *   one that only notifies), which Vol 3 Part G §3.3.3.3 (Table 3.11) allows only with the
 *   matching property: bleno then indicated to a central that asked for notifications (and it
 *   kept reserved bits, 0x0004 and up). Such a
 *   Write Request is Client Characteristic Configuration Descriptor Improperly Configured (0xFD,
 *   CSS Part B §2.3), as BlueZ's gatt-database answers it; a Write Command is dropped;
 * - Read By Type of a value it may not read, Read By Group Type by a type other than «Primary
 *   Service» (att-read-by-type.ts);
 * - a response, notification or indication from the central is dropped, not answered;
 * - a Find By Type Value Request with an empty Attribute Value (0 octets are allowed, §3.4.3.3)
 *   threw in bleno and went unanswered until the client's 30-second timeout: bleno matches
 *   «Primary Service» declarations by their UUID, never empty, so it is Attribute Not Found.
 * (An Exchange MTU Request is answered before these checks: att-mtu-exchange.ts.)
 * Returns the answer to send, `null` to drop the request, `undefined` to let bleno handle it,
 * `request`: another request for bleno to handle in its place, or `writes`: Write Requests for
 * bleno to handle in order, answered as the Execute Write.
 */
export function attServerCheck(
  request: Buffer,
  gatt: BlenoGatt,
  queues: PrepareQueues,
): AttServerAnswer {
  const opcode = request[0]!;
  // Responses, notifications and indications (odd opcodes) are no requests: bleno answered them
  // Request Not Supported, an Error Response naming a request never made (§3.4.1.1), which a
  // central takes for a protocol fault. bleno has no GATT client to take them.
  if (opcode & ODD_OPCODE) return null;
  if (opcode === ATT_OP.PREPARE_WRITE_REQUEST) return prepareWrite(request, gatt, queues);
  if (opcode === ATT_OP.READ_BY_TYPE_REQUEST) return readByType(request, gatt);
  if (opcode === ATT_OP.READ_BY_GROUP_TYPE_REQUEST) return readByGroupTypeRefusal(request);
  if (opcode === ATT_OP.FIND_BY_TYPE_VALUE_REQUEST && request.length === FIND_BY_TYPE_VALUE_HEAD) {
    return errorResponse(opcode, request.readUInt16LE(1), ATT_ERROR.ATTRIBUTE_NOT_FOUND);
  }
  if (opcode === ATT_OP.EXECUTE_WRITE_REQUEST) {
    if (request[1]! > 0x01) return errorResponse(opcode, 0, ATT_ERROR.INVALID_PDU);
    return executeWrite(request, gatt, queues);
  }
  if (opcode === ATT_OP.WRITE_REQUEST || opcode === ATT_OP.WRITE_COMMAND) {
    const handle = request.readUInt16LE(1);
    const entry = gatt._handles[handle];
    const type = entry?.type;
    if (entry && cccdRefuses(request, entry, gatt)) {
      return opcode === ATT_OP.WRITE_COMMAND
        ? null
        : errorResponse(opcode, handle, ATT_ERROR.CCCD_IMPROPERLY_CONFIGURED);
    }
    if (type === undefined || type === "characteristicValue" || type === "descriptor") {
      return undefined;
    }
    if (opcode === ATT_OP.WRITE_COMMAND) return null;
    return errorResponse(opcode, handle, ATT_ERROR.WRITE_NOT_PERMITTED);
  }
  return undefined;
}

/** Bit 0 of an ATT opcode: set on responses, notifications and indications, never on a request. */
const ODD_OPCODE = 0x01;

/** Opcode, handle range and 16-bit type of a Find By Type Value Request: all of it, less the value. */
const FIND_BY_TYPE_VALUE_HEAD = 7;

/**
 * Whether a write of this CCCD value sets a bit its characteristic's properties do not allow
 * (Notification 0x0001 needs notify, Indication 0x0002 indicate). Other lengths, and writes
 * bleno refuses for want of encryption, are left to bleno's own answers.
 */
function cccdRefuses(request: Buffer, entry: BlenoHandle, gatt: BlenoGatt): boolean {
  if (!isCccd(entry) || request.length !== 5) return false;
  const needs = request[0] === ATT_OP.WRITE_COMMAND ? 0x04 : 0x08;
  if ((entry.secure ?? 0) & needs && !gatt._aclStream?.encrypted) return false;
  return !cccdAllowed(request.readUInt16LE(3), entry);
}

/** Puts attServerCheck in front of a bleno instance's GATT server. */
export function guardGattServer(bleno: unknown): void {
  const gatt = (bleno as { _bindings?: { _gatt?: BlenoGatt } })._bindings?._gatt;
  if (gatt === undefined) return;
  const handle = gatt.handleRequest.bind(gatt);
  const queues: PrepareQueues = new WeakMap();
  const exchanges: MtuExchanges = new WeakSet();
  gatt.handleRequest = (received: Buffer) => {
    if (received.length > gatt._mtu) {
      const refusal = overMtuAnswer(received);
      if (refusal !== null) gatt.send(refusal);
      return;
    }
    const request = withShortType(received);
    if (request[0] === ATT_OP.EXCHANGE_MTU_REQUEST) {
      exchangeMtu(request, gatt, exchanges);
      return;
    }
    const answer = attServerCheck(request, gatt, queues);
    if (answer === undefined) handle(request);
    else if (answer === null) return;
    else if (Buffer.isBuffer(answer)) gatt.send(answer);
    else if ("request" in answer) handle(answer.request);
    else gatt.send(executeWrites(answer.writes, gatt, handle));
  };
}

/** Bit 6 of an ATT opcode: a command, never answered (Vol 3 Part F §3.3.1). */
const COMMAND_FLAG = 0x40;
const HANDLE_VALUE_CONFIRMATION = 0x1e;

/**
 * The answer to a PDU longer than the connection's ATT_MTU, the largest PDU either side may send
 * (Vol 3 Part F §3.2.8, §3.4.2.2): 23 until Exchange MTU, then the lesser Rx MTU, which the
 * server's 256 (bleno's maxMtu, what it answers as its Server Rx MTU) caps. bleno took any
 * length: a central's 300-octet Write Request before any exchange was written. A request is
 * Invalid PDU (§3.4.1.1); a command, a confirmation or a response (odd opcodes), none of which
 * is ever answered (§3.3), is dropped.
 */
function overMtuAnswer(pdu: Buffer): Buffer | null {
  const opcode = pdu[0]!;
  if (opcode & COMMAND_FLAG || opcode & 0x01 || opcode === HANDLE_VALUE_CONFIRMATION) return null;
  return errorResponse(opcode, 0x0000, ATT_ERROR.INVALID_PDU);
}

/**
 * Has bleno handle the Execute Write's Write Requests in order and returns the Execute Write's
 * answer: its response, or the first Error Response (the handle in error its attribute's,
 * §3.4.6.3), after which nothing more is written. bleno answers a write at once (the lab's
 * handlers return their status), after any indication a subscribe sends, which goes out.
 */
function executeWrites(
  writes: readonly Buffer[],
  gatt: BlenoGatt,
  handle: (request: Buffer) => void,
): Buffer {
  const send = gatt.send;
  let refused: Buffer | undefined;
  gatt.send = (data: Buffer) => {
    if (data[0] === ATT_OP.WRITE_RESPONSE) return;
    if (data[0] === ATT_OP.ERROR_RESPONSE && data[1] === ATT_OP.WRITE_REQUEST) refused = data;
    else send.call(gatt, data);
  };
  try {
    for (const write of writes) {
      handle(write);
      if (refused !== undefined) break;
    }
  } finally {
    gatt.send = send;
  }
  if (refused === undefined) return Buffer.from([ATT_OP.EXECUTE_WRITE_RESPONSE]);
  const error = Buffer.from(refused);
  error[1] = ATT_OP.EXECUTE_WRITE_REQUEST;
  return error;
}
