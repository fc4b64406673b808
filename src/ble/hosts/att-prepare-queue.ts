/**
 * The prepare queue of the virtual devices' GATT server (Vol 3 Part F §3.4.6), in place of
 * bleno's. bleno checked a Prepare Write Request's offset as it came (Invalid Offset unless it
 * carried on from the part before) and queued one attribute only (a part for a second one was
 * Unlikely Error). §3.4.6.1 has the server check permissions and room at the prepare, and leave
 * offsets and lengths to the Execute Write; a queue holds prepared writes to any attributes,
 * all written at the Execute Write in the order they came (§3.4.6.3), as a Reliable Write of
 * several characteristics needs (Vol 3 Part G §4.9.5).
 */
import {
  type AclStream,
  ATT_ERROR,
  ATT_OP,
  type BlenoGatt,
  type BlenoHandle,
  cccdAllowed,
  errorResponse,
  isCccd,
} from "./bleno-gatt.ts";

interface PreparedWrite {
  readonly handle: number;
  readonly offset: number;
  readonly data: Buffer;
}

/** The prepare queue of each connection of one server, by its ACL stream (new per connection). */
export type PrepareQueues = WeakMap<AclStream, PreparedWrite[]>;

/** Prepared writes one connection may queue before Prepare Queue Full (as NimBLE's default). */
export const PREPARE_QUEUE_LIMIT = 64;
/** The longest attribute value (§3.2.9). */
const MAX_VALUE_LENGTH = 512;
/** Characteristic Properties / descriptor permission bit for Write (Part G §3.3.1.1). */
const WRITE = 0x08;
const CCCD_LENGTH = 2;

/** Answers a Prepare Write Request: queued and echoed, or refused as §3.4.6.1 refuses it. */
export function prepareWrite(request: Buffer, gatt: BlenoGatt, queues: PrepareQueues): Buffer {
  const handle = request.readUInt16LE(1);
  const refusal = prepareRefusal(handle, gatt);
  if (refusal !== undefined) return errorResponse(ATT_OP.PREPARE_WRITE_REQUEST, handle, refusal);
  const stream = gatt._aclStream!;
  const queue = queues.get(stream) ?? [];
  if (queue.length === PREPARE_QUEUE_LIMIT) {
    return errorResponse(ATT_OP.PREPARE_WRITE_REQUEST, handle, ATT_ERROR.PREPARE_QUEUE_FULL);
  }
  queue.push({ handle, offset: request.readUInt16LE(3), data: Buffer.from(request.subarray(5)) });
  queues.set(stream, queue);
  const response = Buffer.from(request);
  response[0] = ATT_OP.PREPARE_WRITE_RESPONSE;
  return response;
}

/**
 * Why a Prepare Write to this handle is refused, by the rights bleno checks a Write Request by:
 * a characteristic's value by its declaration's properties, a descriptor by its own; a
 * declaration is read-only (Part G §3.3.1).
 */
function prepareRefusal(handle: number, gatt: BlenoGatt): number | undefined {
  const entry = gatt._handles[handle];
  if (entry === undefined) return ATT_ERROR.INVALID_HANDLE;
  let rights: BlenoHandle | undefined;
  if (entry.type === "characteristicValue") rights = gatt._handles[handle - 1];
  else if (entry.type === "descriptor") rights = entry;
  if (rights === undefined || !((rights.properties ?? 0) & WRITE)) {
    return ATT_ERROR.WRITE_NOT_PERMITTED;
  }
  if ((rights.secure ?? 0) & WRITE && !gatt._aclStream?.encrypted) {
    return ATT_ERROR.INSUFFICIENT_AUTHENTICATION;
  }
  return undefined;
}

/**
 * Answers an Execute Write Request (Flags 0x00 or 0x01); the queue is emptied either way. With
 * 0x01 the parts are laid out per attribute in the order they came: a characteristic's value
 * from its first octet (the lab's values are written whole), a CCCD over its 2 octets (as
 * Zephyr's CCC write takes an offset). A part starting past the value so far is Invalid Offset,
 * one running past 512 octets (a CCCD's 2) Invalid Attribute Value Length, a CCCD bit its
 * characteristic lacks 0xFD — each answered with that attribute's handle before anything is
 * written. Otherwise `writes`: one Write Request per attribute, for bleno to handle in order.
 */
export function executeWrite(
  request: Buffer,
  gatt: BlenoGatt,
  queues: PrepareQueues,
): Buffer | { readonly writes: Buffer[] } {
  const stream = gatt._aclStream!;
  const queue = queues.get(stream) ?? [];
  queues.delete(stream);
  if (request[1] === 0x00 || queue.length === 0) {
    return Buffer.from([ATT_OP.EXECUTE_WRITE_RESPONSE]);
  }
  const values = new Map<number, Buffer>();
  for (const { handle, offset, data } of queue) {
    const entry = gatt._handles[handle]!;
    const cccd = isCccd(entry);
    const value = values.get(handle) ?? (cccd ? cccdValue(entry) : Buffer.alloc(0));
    let code: number | undefined;
    if (offset > value.length) code = ATT_ERROR.INVALID_OFFSET;
    else if (offset + data.length > (cccd ? CCCD_LENGTH : MAX_VALUE_LENGTH)) {
      code = ATT_ERROR.INVALID_ATTRIBUTE_VALUE_LENGTH;
    }
    if (code !== undefined) return errorResponse(ATT_OP.EXECUTE_WRITE_REQUEST, handle, code);
    const longer = Buffer.alloc(Math.max(value.length, offset + data.length));
    value.copy(longer);
    data.copy(longer, offset);
    values.set(handle, longer);
  }
  for (const [handle, value] of values) {
    const entry = gatt._handles[handle]!;
    if (isCccd(entry) && !cccdAllowed(value.readUInt16LE(0), entry)) {
      return errorResponse(
        ATT_OP.EXECUTE_WRITE_REQUEST,
        handle,
        ATT_ERROR.CCCD_IMPROPERLY_CONFIGURED,
      );
    }
  }
  return { writes: [...values].map(([handle, value]) => writeRequest(handle, value)) };
}

function cccdValue(entry: BlenoHandle): Buffer {
  const value = Buffer.alloc(CCCD_LENGTH);
  entry.value?.copy(value);
  return value;
}

function writeRequest(handle: number, value: Buffer): Buffer {
  const request = Buffer.alloc(3 + value.length);
  request[0] = ATT_OP.WRITE_REQUEST;
  request.writeUInt16LE(handle, 1);
  value.copy(request, 3);
  return request;
}
