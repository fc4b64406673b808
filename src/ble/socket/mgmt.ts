import { type BdAddr, bdAddrFromWire } from "../hci/address.ts";

/**
 * The part of the BlueZ management interface (doc/mgmt-api.txt) that a host stack in raw mode
 * uses: bleno loads the keys of legacy pairing with Load Long Term Keys so "the kernel" can
 * answer the controller's LE Long Term Key Request.
 */
export const MGMT_OP_LOAD_LONG_TERM_KEYS = 0x0013;
const MGMT_EV_CMD_COMPLETE = 0x0001;
const MGMT_EV_CMD_STATUS = 0x0002;
const MGMT_STATUS_SUCCESS = 0x00;
const MGMT_STATUS_UNKNOWN_COMMAND = 0x01;
const MGMT_STATUS_INVALID_PARAMETERS = 0x0d;
const LTK_INFO_SIZE = 36;

export interface LongTermKey {
  address: BdAddr;
  /** 1 LE public, 2 LE random (mgmt address types). */
  addressType: number;
  ediv: number;
  random: Buffer;
  key: Buffer;
}

export interface MgmtCommand {
  opcode: number;
  index: number;
  params: Buffer;
}

/** Reads a command's header (opcode, index, length); undefined when the length does not match. */
export function readMgmtCommand(packet: Buffer): MgmtCommand | undefined {
  if (packet.length < 6) return undefined;
  const length = packet.readUInt16LE(4);
  if (packet.length !== 6 + length) return undefined;
  return {
    opcode: packet.readUInt16LE(0),
    index: packet.readUInt16LE(2),
    params: packet.subarray(6),
  };
}

/** Load Long Term Keys parameters: Key_Count then 36-octet entries. */
export function readLongTermKeys(params: Buffer): LongTermKey[] | undefined {
  if (params.length < 2) return undefined;
  const count = params.readUInt16LE(0);
  if (params.length !== 2 + count * LTK_INFO_SIZE) return undefined;
  const keys: LongTermKey[] = [];
  for (let i = 0; i < count; i++) {
    const at = 2 + i * LTK_INFO_SIZE;
    const size = Math.min(16, params[at + 9]!);
    keys.push({
      address: bdAddrFromWire(params, at),
      addressType: params[at + 6]!,
      ediv: params.readUInt16LE(at + 10),
      random: Buffer.from(params.subarray(at + 12, at + 20)),
      key: Buffer.from(params.subarray(at + 20, at + 20 + size)),
    });
  }
  return keys;
}

/** Command Complete or Command Status event for a mgmt command. */
export function mgmtReply(command: MgmtCommand, status: number): Buffer {
  const complete = status === MGMT_STATUS_SUCCESS;
  const out = Buffer.alloc(9);
  out.writeUInt16LE(complete ? MGMT_EV_CMD_COMPLETE : MGMT_EV_CMD_STATUS, 0);
  out.writeUInt16LE(command.index, 2);
  out.writeUInt16LE(3, 4);
  out.writeUInt16LE(command.opcode, 6);
  out[8] = status;
  return out;
}

export const MGMT_STATUS = {
  SUCCESS: MGMT_STATUS_SUCCESS,
  UNKNOWN_COMMAND: MGMT_STATUS_UNKNOWN_COMMAND,
  INVALID_PARAMETERS: MGMT_STATUS_INVALID_PARAMETERS,
} as const;
