/** An entry of bleno's attribute table: a CCCD (uuid 2902) holds its characteristic. */
interface BlenoHandle {
  readonly type: string;
  readonly uuid?: string;
  readonly secure?: number;
  readonly attribute?: { readonly properties?: readonly string[] };
}

/** bleno's GATT server, as far as these checks read it (lib/hci-socket/gatt.js). */
interface BlenoGatt {
  _handles: readonly (BlenoHandle | undefined)[];
  _aclStream: { readonly encrypted?: boolean } | null;
  _preparedWriteRequest: unknown;
  handleRequest(request: Buffer): void;
  send(data: Buffer): void;
}

/** ATT opcodes and error codes used here (Vol 3 Part F §3.4). */
const ERROR_RESPONSE = 0x01;
const WRITE_REQUEST = 0x12;
const PREPARE_WRITE_REQUEST = 0x16;
const EXECUTE_WRITE_REQUEST = 0x18;
const EXECUTE_WRITE_RESPONSE = 0x19;
const WRITE_COMMAND = 0x52;
const INVALID_PDU = 0x04;
const WRITE_NOT_PERMITTED = 0x03;
/** CSS Part B §1.2, §2.3. */
const CCCD_IMPROPERLY_CONFIGURED = 0xfd;

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
 *   CSS Part B §2.3), as BlueZ's gatt-database answers it; a Write Command is dropped.
 * Returns the answer to send, `null` to drop the request, or `undefined` to let bleno handle it.
 */
export function attServerCheck(request: Buffer, gatt: BlenoGatt): Buffer | null | undefined {
  const opcode = request[0];
  if (opcode === WRITE_REQUEST || opcode === PREPARE_WRITE_REQUEST || opcode === WRITE_COMMAND) {
    const handle = request.readUInt16LE(1);
    const entry = gatt._handles[handle];
    const type = entry?.type;
    if (opcode !== PREPARE_WRITE_REQUEST && entry && cccdRefuses(request, entry, gatt)) {
      return opcode === WRITE_COMMAND
        ? null
        : errorResponse(opcode, handle, CCCD_IMPROPERLY_CONFIGURED);
    }
    if (type === undefined || type === "characteristicValue" || type === "descriptor") {
      return undefined;
    }
    if (opcode === WRITE_COMMAND) return null;
    return errorResponse(opcode, handle, WRITE_NOT_PERMITTED);
  }
  if (opcode === EXECUTE_WRITE_REQUEST) {
    if (request[1]! > 0x01) return errorResponse(opcode, 0, INVALID_PDU);
    if (!gatt._preparedWriteRequest) return Buffer.from([EXECUTE_WRITE_RESPONSE]);
  }
  return undefined;
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
  if (entry.type !== "descriptor" || entry.uuid !== "2902" || request.length !== 5) return false;
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
  gatt.handleRequest = (request: Buffer) => {
    const answer = attServerCheck(request, gatt);
    if (answer === undefined) handle(request);
    else if (answer !== null) gatt.send(answer);
  };
}
