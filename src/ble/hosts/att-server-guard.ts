/** bleno's GATT server, as far as these checks read it (lib/hci-socket/gatt.js). */
interface BlenoGatt {
  _handles: readonly ({ readonly type: string } | undefined)[];
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

/**
 * What bleno's GATT server gets wrong, answered before it reads a request (the L2CAP guard has
 * already checked lengths):
 * - a Write Request or Prepare Write Request to a service or characteristic declaration reaches
 *   the characteristic's write handler (a declaration is read-only: Write Not Permitted, §3.4.5.1,
 *   Vol 3 Part G §3.3.1), and a Write Command to one is dropped, not written;
 * - an Execute Write Request with nothing prepared is Unlikely Error instead of an Execute Write
 *   Response (§3.4.6.3), and reserved flags (0x02–0xFF) are Unlikely Error instead of Invalid
 *   PDU (BlueZ's gatt-server answers both so).
 * Returns the answer to send, `null` to drop the request, or `undefined` to let bleno handle it.
 */
export function attServerCheck(request: Buffer, gatt: BlenoGatt): Buffer | null | undefined {
  const opcode = request[0];
  if (opcode === WRITE_REQUEST || opcode === PREPARE_WRITE_REQUEST || opcode === WRITE_COMMAND) {
    const handle = request.readUInt16LE(1);
    const type = gatt._handles[handle]?.type;
    if (type === undefined || type === "characteristicValue" || type === "descriptor") {
      return undefined;
    }
    if (opcode === WRITE_COMMAND) return null;
    return Buffer.from([ERROR_RESPONSE, opcode, handle & 0xff, handle >> 8, WRITE_NOT_PERMITTED]);
  }
  if (opcode === EXECUTE_WRITE_REQUEST) {
    if (request[1]! > 0x01) return Buffer.from([ERROR_RESPONSE, opcode, 0, 0, INVALID_PDU]);
    if (!gatt._preparedWriteRequest) return Buffer.from([EXECUTE_WRITE_RESPONSE]);
  }
  return undefined;
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
