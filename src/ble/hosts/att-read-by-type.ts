/**
 * Read By Type and Read By Group Type Requests bleno answers wrongly (Vol 3 Part F §3.4.4.1,
 * §3.4.4.9), answered in front of it.
 */
import {
  ATT_ERROR,
  ATT_OP,
  type BlenoGatt,
  type BlenoHandle,
  errorResponse,
} from "./bleno-gatt.ts";

/** Characteristic Properties / descriptor permission bit for Read (Vol 3 Part G §3.3.1.1). */
const READ = 0x02;
const PRIMARY_SERVICE = "2800";
const SECONDARY_SERVICE = "2801";
const CHARACTERISTIC = "2803";

/** The Bluetooth Base UUID's 12 low octets, as sent (least significant first; Vol 3 Part B §2.5.1). */
const BASE_UUID_LOW = Buffer.from("fb349b5f8000008000100000", "hex");

/**
 * A Read By Type or Read By Group Type Request whose type is a 16-bit UUID written out on the
 * Base UUID (0000xxxx-0000-1000-8000-00805F9B34FB), rewritten with the 16-bit form: UUIDs are
 * compared as 128-bit values (Vol 3 Part F §3.2.1), where bleno compared their spelling and
 * found no «Characteristic» or «Primary Service» by the 128-bit one. Other requests as they are.
 */
export function withShortType(request: Buffer): Buffer {
  const ranged =
    request[0] === ATT_OP.READ_BY_TYPE_REQUEST || request[0] === ATT_OP.READ_BY_GROUP_TYPE_REQUEST;
  if (!ranged || request.length !== 21) return request;
  if (!request.subarray(5, 17).equals(BASE_UUID_LOW) || request.readUInt16LE(19) !== 0) {
    return request;
  }
  return Buffer.concat([request.subarray(0, 5), request.subarray(17, 19)]);
}

/** A request's UUID field as bleno spells UUIDs: hex, most significant octet first. */
const uuidOf = (request: Buffer): string =>
  Buffer.from(request.subarray(5)).reverse().toString("hex");

/**
 * Read By Type of a characteristic's value or a descriptor by its UUID (`gatttool
 * --char-read --uuid`, Android's readUsingCharacteristicUuid), answered by the first attribute
 * of that type within the range (§3.4.4.1). bleno matched a value by its declaration, one handle
 * before it: a range holding the value alone found nothing, one ending at the declaration
 * answered the value past its end. It read the match without its Read property too, so an
 * indicate-only measurement was read through its handler and answered Unlikely Error, and a read
 * that needs encryption was refused naming the range's start. §3.4.4.1 refuses the first match
 * with the handle of that attribute: Read Not Permitted, Insufficient Authentication. Returns
 * the answer, or `request`: the request for bleno to answer, narrowed to the match so that
 * bleno finds it.
 */
export function readByType(
  request: Buffer,
  gatt: BlenoGatt,
): Buffer | { readonly request: Buffer } {
  const uuid = uuidOf(request);
  if (uuid === CHARACTERISTIC) return { request };
  const start = request.readUInt16LE(1);
  const end = request.readUInt16LE(3);
  for (let handle = start; handle <= end; handle++) {
    const entry = gatt._handles[handle];
    if (entry === undefined) break;
    if (entry.type === "characteristicValue") {
      const declaration = gatt._handles[handle - 1];
      if (declaration?.uuid !== uuid) continue;
      return (
        refusal(declaration, handle, gatt) ?? { request: narrowed(request, handle - 1, handle) }
      );
    }
    if (entry.type === "descriptor" && entry.uuid === uuid) {
      return refusal(entry, handle, gatt) ?? { request: narrowed(request, handle, handle) };
    }
  }
  return errorResponse(ATT_OP.READ_BY_TYPE_REQUEST, start, ATT_ERROR.ATTRIBUTE_NOT_FOUND);
}

/** The request with its range set to first–last. */
function narrowed(request: Buffer, first: number, last: number): Buffer {
  const copy = Buffer.from(request);
  copy.writeUInt16LE(first, 1);
  copy.writeUInt16LE(last, 3);
  return copy;
}

function refusal(rights: BlenoHandle, handle: number, gatt: BlenoGatt): Buffer | undefined {
  let code: number | undefined;
  if (!((rights.properties ?? 0) & READ)) code = ATT_ERROR.READ_NOT_PERMITTED;
  else if ((rights.secure ?? 0) & READ && !gatt._aclStream?.encrypted) {
    code = ATT_ERROR.INSUFFICIENT_AUTHENTICATION;
  }
  return code === undefined ? undefined : errorResponse(ATT_OP.READ_BY_TYPE_REQUEST, handle, code);
}

/**
 * Read By Group Type: the grouping types are «Primary Service» and «Secondary Service» (Vol 3
 * Part G §2.5.3, §4.4.1). bleno answered a search for secondary services Unsupported Group Type
 * (it has none: Attribute Not Found) and grouped by «Include» (0x2802), which is no grouping
 * type (Unsupported Group Type, §3.4.4.9).
 */
export function readByGroupTypeRefusal(request: Buffer): Buffer | undefined {
  const uuid = uuidOf(request);
  if (uuid === PRIMARY_SERVICE) return undefined;
  const start = request.readUInt16LE(1);
  const code =
    uuid === SECONDARY_SERVICE ? ATT_ERROR.ATTRIBUTE_NOT_FOUND : ATT_ERROR.UNSUPPORTED_GROUP_TYPE;
  return errorResponse(ATT_OP.READ_BY_GROUP_TYPE_REQUEST, start, code);
}
