import { type BdAddr, bdAddrToWire } from "./address.ts";
import { EVT, H4, LE_EVT } from "./constants.ts";

/**
 * Builders for the HCI event packets the controller sends, each with its H4 indicator so a
 * socket can hand it to a host as is. Layouts from Vol 4 Part E §5.4.4 (event packet) and the
 * section cited on each builder.
 */

/** Num_HCI_Command_Packets: the controller takes one command at a time. */
const NUM_HCI_COMMAND_PACKETS = 1;

export function eventPacket(code: number, params: Uint8Array): Buffer {
  const out = Buffer.alloc(3 + params.length);
  out[0] = H4.EVENT;
  out[1] = code;
  out[2] = params.length;
  out.set(params, 3);
  return out;
}

/** Command Complete (§7.7.14): return parameters start with the status for every command here. */
export function commandComplete(opcode: number, returnParams: Uint8Array): Buffer {
  const params = Buffer.alloc(3 + returnParams.length);
  params[0] = NUM_HCI_COMMAND_PACKETS;
  params.writeUInt16LE(opcode, 1);
  params.set(returnParams, 3);
  return eventPacket(EVT.COMMAND_COMPLETE, params);
}

/** Command Status (§7.7.15). */
export function commandStatus(opcode: number, status: number): Buffer {
  const params = Buffer.alloc(4);
  params[0] = status;
  params[1] = NUM_HCI_COMMAND_PACKETS;
  params.writeUInt16LE(opcode, 2);
  return eventPacket(EVT.COMMAND_STATUS, params);
}

/** Disconnection Complete (§7.7.5). */
export function disconnectionComplete(status: number, handle: number, reason: number): Buffer {
  const params = Buffer.alloc(4);
  params[0] = status;
  params.writeUInt16LE(handle, 1);
  params[3] = reason;
  return eventPacket(EVT.DISCONNECTION_COMPLETE, params);
}

/** Encryption Change [v1] (§7.7.8). */
export function encryptionChange(status: number, handle: number, enabled: boolean): Buffer {
  const params = Buffer.alloc(4);
  params[0] = status;
  params.writeUInt16LE(handle, 1);
  params[3] = enabled ? 0x01 : 0x00;
  return eventPacket(EVT.ENCRYPTION_CHANGE, params);
}

/** Number Of Completed Packets (§7.7.19), one entry per handle. */
export function numberOfCompletedPackets(
  entries: ReadonlyArray<[handle: number, count: number]>,
): Buffer {
  const params = Buffer.alloc(1 + entries.length * 4);
  params[0] = entries.length;
  entries.forEach(([handle, count], i) => {
    params.writeUInt16LE(handle, 1 + i * 4);
    params.writeUInt16LE(count, 3 + i * 4);
  });
  return eventPacket(EVT.NUMBER_OF_COMPLETED_PACKETS, params);
}

/** Data Buffer Overflow (§7.7.26): Link_Type 0x01 is ACL. */
export function dataBufferOverflow(): Buffer {
  return eventPacket(EVT.DATA_BUFFER_OVERFLOW, Buffer.from([0x01]));
}

/** Hardware Error (§7.7.16): what a UART controller says when it loses H4 framing. */
export function hardwareError(code: number): Buffer {
  return eventPacket(EVT.HARDWARE_ERROR, Buffer.from([code]));
}

function leMeta(subevent: number, params: Uint8Array): Buffer {
  const body = Buffer.alloc(1 + params.length);
  body[0] = subevent;
  body.set(params, 1);
  return eventPacket(EVT.LE_META, body);
}

export interface ConnectionCompleteFields {
  status: number;
  handle: number;
  /** 0x00 central, 0x01 peripheral. */
  role: 0 | 1;
  peerAddressType: number;
  peerAddress: BdAddr;
  /** Units of 1.25 ms. */
  interval: number;
  latency: number;
  /** Units of 10 ms. */
  supervisionTimeout: number;
  centralClockAccuracy: number;
}

/** LE Connection Complete (§7.7.65.1). */
export function leConnectionComplete(f: ConnectionCompleteFields): Buffer {
  const p = Buffer.alloc(18);
  p[0] = f.status;
  p.writeUInt16LE(f.handle, 1);
  p[3] = f.role;
  p[4] = f.peerAddressType;
  p.set(bdAddrToWire(f.peerAddress), 5);
  p.writeUInt16LE(f.interval, 11);
  p.writeUInt16LE(f.latency, 13);
  p.writeUInt16LE(f.supervisionTimeout, 15);
  p[17] = f.centralClockAccuracy;
  return leMeta(LE_EVT.CONNECTION_COMPLETE, p);
}

export interface AdvertisingReportFields {
  eventType: number;
  addressType: number;
  address: BdAddr;
  data: Uint8Array;
  rssi: number;
}

/** LE Advertising Report (§7.7.65.2), one report per event. */
export function leAdvertisingReport(r: AdvertisingReportFields): Buffer {
  const p = Buffer.alloc(11 + r.data.length);
  p[0] = 1; // Num_Reports
  p[1] = r.eventType;
  p[2] = r.addressType;
  p.set(bdAddrToWire(r.address), 3);
  p[9] = r.data.length;
  p.set(r.data, 10);
  p.writeInt8(Math.max(-127, Math.min(20, Math.round(r.rssi))), 10 + r.data.length);
  return leMeta(LE_EVT.ADVERTISING_REPORT, p);
}

/** LE Connection Update Complete (§7.7.65.3). */
export function leConnectionUpdateComplete(
  status: number,
  handle: number,
  interval: number,
  latency: number,
  supervisionTimeout: number,
): Buffer {
  const p = Buffer.alloc(9);
  p[0] = status;
  p.writeUInt16LE(handle, 1);
  p.writeUInt16LE(interval, 3);
  p.writeUInt16LE(latency, 5);
  p.writeUInt16LE(supervisionTimeout, 7);
  return leMeta(LE_EVT.CONNECTION_UPDATE_COMPLETE, p);
}

/** LE Long Term Key Request (§7.7.65.5). */
export function leLongTermKeyRequest(handle: number, random: Uint8Array, ediv: number): Buffer {
  const p = Buffer.alloc(12);
  p.writeUInt16LE(handle, 0);
  p.set(random.subarray(0, 8), 2);
  p.writeUInt16LE(ediv, 10);
  return leMeta(LE_EVT.LONG_TERM_KEY_REQUEST, p);
}

/** LE Read Remote Features Complete (§7.7.65.4). */
export function leReadRemoteFeaturesComplete(
  status: number,
  handle: number,
  features: Uint8Array,
): Buffer {
  const p = Buffer.alloc(11);
  p[0] = status;
  p.writeUInt16LE(handle, 1);
  p.set(features.subarray(0, 8), 3);
  return leMeta(LE_EVT.READ_REMOTE_FEATURES_COMPLETE, p);
}
