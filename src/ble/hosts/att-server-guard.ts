import { exchangeMtu, type MtuExchanges, type MtuGatt } from "./att-mtu-exchange.ts";

/** An entry of bleno's attribute table: a CCCD (uuid 2902) holds its characteristic. */
interface BlenoHandle {
  readonly type: string;
  readonly uuid?: string;
  readonly secure?: number;
  readonly value?: Buffer;
  readonly attribute?: { readonly properties?: readonly string[] };
}

interface AclStream {
  readonly encrypted?: boolean;
}

/** bleno's GATT server, as far as these checks read it (lib/hci-socket/gatt.js). */
interface BlenoGatt extends MtuGatt {
  _handles: readonly (BlenoHandle | undefined)[];
  readonly _aclStream: AclStream | null;
  _preparedWriteRequest: unknown;
  handleRequest(request: Buffer): void;
  send(data: Buffer): void;
}

/** ATT opcodes and error codes used here (Vol 3 Part F §3.4). */
const ERROR_RESPONSE = 0x01;
const EXCHANGE_MTU_REQUEST = 0x02;
const WRITE_REQUEST = 0x12;
const WRITE_RESPONSE = 0x13;
const PREPARE_WRITE_REQUEST = 0x16;
const PREPARE_WRITE_RESPONSE = 0x17;
const EXECUTE_WRITE_REQUEST = 0x18;
const EXECUTE_WRITE_RESPONSE = 0x19;
const WRITE_COMMAND = 0x52;
const INVALID_PDU = 0x04;
const WRITE_NOT_PERMITTED = 0x03;
const INSUFFICIENT_AUTHENTICATION = 0x05;
const INVALID_OFFSET = 0x07;
const PREPARE_QUEUE_FULL = 0x09;
const INVALID_ATTRIBUTE_VALUE_LENGTH = 0x0d;
const UNLIKELY_ERROR = 0x0e;
/** CSS Part B §1.2, §2.3. */
const CCCD_IMPROPERLY_CONFIGURED = 0xfd;

/** Prepare Write Requests to a CCCD queued on one connection (bleno queues values only). */
interface PreparedCccd {
  readonly handle: number;
  readonly parts: { readonly offset: number; readonly data: Buffer }[];
}
/** The CCCD queue of each connection of one server, by its ACL stream (new per connection). */
export type CccdQueues = WeakMap<AclStream, PreparedCccd>;
/** Prepared parts one CCCD takes before Prepare Queue Full (its value is 2 octets). */
const CCCD_QUEUE_LIMIT = 16;

/** What the guard does with a request: see attServerCheck. */
export type AttServerAnswer = Buffer | null | undefined | { readonly executeAs: Buffer };

/**
 * What bleno's GATT server gets wrong, answered before it reads a request (the L2CAP guard has
 * already checked lengths):
 * - a Write Request or Prepare Write Request to a service or characteristic declaration reaches
 *   the characteristic's write handler (a declaration is read-only: Write Not Permitted, §3.4.5.1,
 *   Vol 3 Part G §3.3.1), and a Write Command to one is dropped, not written;
 * - an Execute Write Request with nothing prepared is Unlikely Error instead of an Execute Write
 *   Response (§3.4.6.3), and reserved flags (0x02–0xFF) are Unlikely Error instead of Invalid
 *   PDU (BlueZ's gatt-server answers both so);
 * - a CCCD takes the Notification bit on a characteristic that only indicates (and Indication on
 *   one that only notifies), which Vol 3 Part G §3.3.3.3 (Table 3.11) allows only with the
 *   matching property: bleno then indicated to a central that asked for notifications. Such a
 *   Write Request is Client Characteristic Configuration Descriptor Improperly Configured (0xFD,
 *   CSS Part B §2.3), as BlueZ's gatt-database answers it; a Write Command is dropped;
 * - a Prepare Write Request to a CCCD is Attribute Not Long (0x0B), a code Part F §3.4.1.1
 *   defines for Read Blob only, where §3.4.6.1 says the server shall answer a Prepare Write
 *   Response to a writable attribute (Part G §4.9.5 Reliable Writes, §4.12.4): it is queued
 *   here and written at the Execute Write Request, whose validation §3.4.6.1 places there.
 * (An Exchange MTU Request is answered before these checks: att-mtu-exchange.ts.)
 * Returns the answer to send, `null` to drop the request, `undefined` to let bleno handle it,
 * or `executeAs`: a Write Request for bleno to handle, answered as the Execute Write.
 */
export function attServerCheck(
  request: Buffer,
  gatt: BlenoGatt,
  queues: CccdQueues,
): AttServerAnswer {
  const opcode = request[0];
  if (opcode === WRITE_REQUEST || opcode === PREPARE_WRITE_REQUEST || opcode === WRITE_COMMAND) {
    const handle = request.readUInt16LE(1);
    const entry = gatt._handles[handle];
    const type = entry?.type;
    if (opcode === PREPARE_WRITE_REQUEST && entry && isCccd(entry)) {
      return prepareCccd(request, handle, entry, gatt, queues);
    }
    if (opcode !== PREPARE_WRITE_REQUEST && entry && cccdRefuses(request, entry, gatt)) {
      return opcode === WRITE_COMMAND
        ? null
        : errorResponse(opcode, handle, CCCD_IMPROPERLY_CONFIGURED);
    }
    if (
      type === "characteristicValue" &&
      opcode === PREPARE_WRITE_REQUEST &&
      queuedCccd(gatt, queues)
    ) {
      // bleno queues one attribute at a time, and answers a second one so too.
      return errorResponse(opcode, handle, UNLIKELY_ERROR);
    }
    if (type === undefined || type === "characteristicValue" || type === "descriptor") {
      return undefined;
    }
    if (opcode === WRITE_COMMAND) return null;
    return errorResponse(opcode, handle, WRITE_NOT_PERMITTED);
  }
  if (opcode === EXECUTE_WRITE_REQUEST) {
    if (request[1]! > 0x01) return errorResponse(opcode, 0, INVALID_PDU);
    const queued = queuedCccd(gatt, queues);
    if (queued !== undefined) {
      queues.delete(gatt._aclStream!);
      return request[1] === 0x01
        ? executeCccd(queued, gatt)
        : Buffer.from([EXECUTE_WRITE_RESPONSE]);
    }
    if (!gatt._preparedWriteRequest) return Buffer.from([EXECUTE_WRITE_RESPONSE]);
  }
  return undefined;
}

function isCccd(entry: BlenoHandle): boolean {
  return entry.type === "descriptor" && entry.uuid === "2902";
}

function queuedCccd(gatt: BlenoGatt, queues: CccdQueues): PreparedCccd | undefined {
  return gatt._aclStream ? queues.get(gatt._aclStream) : undefined;
}

/** Queues a Prepare Write Request to a CCCD, checked as §3.4.6.1 checks it: permissions, space. */
function prepareCccd(
  request: Buffer,
  handle: number,
  entry: BlenoHandle,
  gatt: BlenoGatt,
  queues: CccdQueues,
): Buffer {
  const stream = gatt._aclStream!;
  if ((entry.secure ?? 0) & 0x08 && !stream.encrypted) {
    return errorResponse(PREPARE_WRITE_REQUEST, handle, INSUFFICIENT_AUTHENTICATION);
  }
  const queued = queues.get(stream);
  if (gatt._preparedWriteRequest || (queued !== undefined && queued.handle !== handle)) {
    return errorResponse(PREPARE_WRITE_REQUEST, handle, UNLIKELY_ERROR);
  }
  const parts = queued?.parts ?? [];
  if (parts.length === CCCD_QUEUE_LIMIT) {
    return errorResponse(PREPARE_WRITE_REQUEST, handle, PREPARE_QUEUE_FULL);
  }
  parts.push({ offset: request.readUInt16LE(3), data: Buffer.from(request.subarray(5)) });
  queues.set(stream, { handle, parts });
  const response = Buffer.from(request);
  response[0] = PREPARE_WRITE_RESPONSE;
  return response;
}

/**
 * The queued parts written over the CCCD's 2 octets in order (as Zephyr's CCC write takes an
 * offset): an offset past them is Invalid Offset, a part running past them Invalid Attribute
 * Value Length, a bit the characteristic lacks 0xFD; the value is then written as by a Write
 * Request.
 */
function executeCccd(queued: PreparedCccd, gatt: BlenoGatt): AttServerAnswer {
  const entry = gatt._handles[queued.handle]!;
  const value = Buffer.alloc(2);
  entry.value?.copy(value);
  for (const { offset, data } of queued.parts) {
    let code: number | undefined;
    if (offset > value.length) code = INVALID_OFFSET;
    else if (offset + data.length > value.length) code = INVALID_ATTRIBUTE_VALUE_LENGTH;
    if (code !== undefined) return errorResponse(EXECUTE_WRITE_REQUEST, queued.handle, code);
    data.copy(value, offset);
  }
  if (!cccdAllowed(value.readUInt16LE(0), entry)) {
    return errorResponse(EXECUTE_WRITE_REQUEST, queued.handle, CCCD_IMPROPERLY_CONFIGURED);
  }
  const write = Buffer.alloc(5);
  write[0] = WRITE_REQUEST;
  write.writeUInt16LE(queued.handle, 1);
  value.copy(write, 3);
  return { executeAs: write };
}

function errorResponse(opcode: number, handle: number, code: number): Buffer {
  return Buffer.from([ERROR_RESPONSE, opcode, handle & 0xff, handle >> 8, code]);
}

/**
 * Whether a write of this CCCD value sets a bit its characteristic's properties do not allow
 * (Notification 0x0001 needs notify, Indication 0x0002 indicate). Other lengths, and writes
 * bleno refuses for want of encryption, are left to bleno's own answers.
 */
function cccdRefuses(request: Buffer, entry: BlenoHandle, gatt: BlenoGatt): boolean {
  if (!isCccd(entry) || request.length !== 5) return false;
  const needs = request[0] === WRITE_COMMAND ? 0x04 : 0x08;
  if ((entry.secure ?? 0) & needs && !gatt._aclStream?.encrypted) return false;
  return !cccdAllowed(request.readUInt16LE(3), entry);
}

function cccdAllowed(value: number, entry: BlenoHandle): boolean {
  const properties = entry.attribute?.properties ?? [];
  if (value & 0x0001 && !properties.includes("notify")) return false;
  if (value & 0x0002 && !properties.includes("indicate")) return false;
  return true;
}

/** Puts attServerCheck in front of a bleno instance's GATT server. */
export function guardGattServer(bleno: unknown): void {
  const gatt = (bleno as { _bindings?: { _gatt?: BlenoGatt } })._bindings?._gatt;
  if (gatt === undefined) return;
  const handle = gatt.handleRequest.bind(gatt);
  const queues: CccdQueues = new WeakMap();
  const exchanges: MtuExchanges = new WeakSet();
  gatt.handleRequest = (request: Buffer) => {
    if (request[0] === EXCHANGE_MTU_REQUEST) {
      exchangeMtu(request, gatt, exchanges);
      return;
    }
    const answer = attServerCheck(request, gatt, queues);
    if (answer === undefined) handle(request);
    else if (answer === null) return;
    else if (Buffer.isBuffer(answer)) gatt.send(answer);
    else {
      // bleno answers a CCCD write at once (after any indication its subscribe sends): its Write
      // Response, or Error Response, becomes the Execute Write's.
      const send = gatt.send;
      gatt.send = (data: Buffer) => send.call(gatt, asExecuteAnswer(data));
      try {
        handle(answer.executeAs);
      } finally {
        gatt.send = send;
      }
    }
  };
}

function asExecuteAnswer(data: Buffer): Buffer {
  if (data[0] === WRITE_RESPONSE) return Buffer.from([EXECUTE_WRITE_RESPONSE]);
  if (data[0] !== ERROR_RESPONSE || data[1] !== WRITE_REQUEST) return data;
  const error = Buffer.from(data);
  error[1] = EXECUTE_WRITE_REQUEST;
  return error;
}
