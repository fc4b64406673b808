import type { MtuGatt } from "./att-mtu-exchange.ts";

/**
 * An entry of bleno's attribute table (lib/hci-socket/gatt.js setServices): a declaration, a
 * characteristic's value, or a descriptor; a CCCD (uuid 2902) holds its characteristic.
 */
export interface BlenoHandle {
  readonly type: string;
  readonly uuid?: string;
  /** Characteristic Properties of a declaration; the permissions bleno gives a descriptor. */
  readonly properties?: number;
  /** The properties that need an encrypted link (same bits). */
  readonly secure?: number;
  readonly value?: Buffer;
  /** A characteristic declaration's value handle. */
  readonly valueHandle?: number;
  readonly attribute?: { readonly properties?: readonly string[] };
}

export interface AclStream {
  readonly encrypted?: boolean;
}

/** bleno's GATT server, as far as the guard reads it (lib/hci-socket/gatt.js). */
export interface BlenoGatt extends MtuGatt {
  _handles: readonly (BlenoHandle | undefined)[];
  readonly _aclStream: AclStream | null;
  handleRequest(request: Buffer): void;
  send(data: Buffer): void;
}

/** ATT opcodes and error codes the server guard answers with (Vol 3 Part F §3.4). */
export const ATT_OP = {
  ERROR_RESPONSE: 0x01,
  EXCHANGE_MTU_REQUEST: 0x02,
  FIND_BY_TYPE_VALUE_REQUEST: 0x06,
  READ_BY_TYPE_REQUEST: 0x08,
  READ_BY_GROUP_TYPE_REQUEST: 0x10,
  WRITE_REQUEST: 0x12,
  WRITE_RESPONSE: 0x13,
  PREPARE_WRITE_REQUEST: 0x16,
  PREPARE_WRITE_RESPONSE: 0x17,
  EXECUTE_WRITE_REQUEST: 0x18,
  EXECUTE_WRITE_RESPONSE: 0x19,
  WRITE_COMMAND: 0x52,
} as const;

export const ATT_ERROR = {
  INVALID_HANDLE: 0x01,
  READ_NOT_PERMITTED: 0x02,
  WRITE_NOT_PERMITTED: 0x03,
  INVALID_PDU: 0x04,
  INSUFFICIENT_AUTHENTICATION: 0x05,
  INVALID_OFFSET: 0x07,
  PREPARE_QUEUE_FULL: 0x09,
  ATTRIBUTE_NOT_FOUND: 0x0a,
  INVALID_ATTRIBUTE_VALUE_LENGTH: 0x0d,
  UNSUPPORTED_GROUP_TYPE: 0x10,
  /** CSS Part B §1.2, §2.3. */
  CCCD_IMPROPERLY_CONFIGURED: 0xfd,
} as const;

export function errorResponse(opcode: number, handle: number, code: number): Buffer {
  return Buffer.from([ATT_OP.ERROR_RESPONSE, opcode, handle & 0xff, handle >> 8, code]);
}

const CCCD_NOTIFICATION = 0x0001;
const CCCD_INDICATION = 0x0002;

export function isCccd(entry: BlenoHandle): boolean {
  return entry.type === "descriptor" && entry.uuid === "2902";
}

/**
 * Whether a CCCD value sets only bits its characteristic's properties allow (Part G Table 3.11).
 * Bits past Indication are reserved: bleno stored them and read them back, where BlueZ's
 * gatt-database (ccc_write_cb) refuses them as 0xFD too.
 */
export function cccdAllowed(value: number, entry: BlenoHandle): boolean {
  if (value & ~(CCCD_NOTIFICATION | CCCD_INDICATION)) return false;
  const properties = entry.attribute?.properties ?? [];
  if (value & CCCD_NOTIFICATION && !properties.includes("notify")) return false;
  if (value & CCCD_INDICATION && !properties.includes("indicate")) return false;
  return true;
}

/** The value bleno keeps in the CCCD of this characteristic (its bleno object), if it has one. */
export function cccdValueOf(bleno: unknown, characteristic: object): number | undefined {
  const gatt = (bleno as { _bindings?: { _gatt?: BlenoGatt } })._bindings?._gatt;
  const entry = gatt?._handles.find(
    (h) => h !== undefined && isCccd(h) && h.attribute === characteristic,
  );
  return entry?.value?.length === 2 ? entry.value.readUInt16LE(0) : undefined;
}

/** The ATT_MTU of bleno's connection, if it has a GATT server. */
export function attMtuOf(bleno: unknown): number | undefined {
  return (bleno as { _bindings?: { _gatt?: BlenoGatt } })._bindings?._gatt?._mtu;
}

/**
 * bleno's update function, sending an indication: bleno notifies whenever the characteristic
 * has Notify, so Notify is hidden from it for the call (it reads the properties as it sends).
 */
export function indicating(
  characteristic: { readonly properties: readonly string[] },
  update: (value: Buffer) => void,
): (value: Buffer) => void {
  const target = characteristic as { properties: readonly string[] };
  return (value) => {
    const properties = target.properties;
    target.properties = properties.filter((p) => p !== "notify");
    try {
      update(value);
    } finally {
      target.properties = properties;
    }
  };
}
