/**
 * What the virtual controller says about itself. Read Local Version: HCI and LMP version 0x0D is
 * Core 5.4 (Assigned Numbers §2.1); noble and bleno refuse anything below 0x06 (4.0).
 * Company identifier 0xFFFF is reserved for tests (Assigned Numbers §7).
 */
import { OP } from "../hci/constants.ts";

export const LOCAL_VERSION = {
  hciVersion: 0x0d,
  hciRevision: 0x0001,
  lmpVersion: 0x0d,
  manufacturer: 0xffff,
  lmpSubversion: 0x0001,
} as const;

/**
 * LMP features page 0 (Vol 2 Part C §3.3): octet 4 bit 6 "BR/EDR Not Supported" and bit 5
 * "LE Supported (Controller)": an LE-only controller.
 */
export const LMP_FEATURES = Buffer.from([0, 0, 0, 0, 0x60, 0, 0, 0]);

/**
 * LE features (Vol 6 Part B §4.6): bit 0 LE Encryption, bit 2 Extended Reject Indication,
 * bit 5 LE Data Packet Length Extension is NOT set (27-octet payloads).
 */
export const LE_FEATURES = Buffer.from([0x05, 0, 0, 0, 0, 0, 0, 0]);

/** LE Read Supported States (Vol 4 Part E §7.8.27): every legacy state combination. */
export const LE_STATES = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x03, 0, 0]);

/** Supported_Commands octet and bit of each command (Vol 4 Part E §6.27). */
const SUPPORTED: ReadonlyArray<[opcode: number, octet: number, bit: number]> = [
  [OP.DISCONNECT, 0, 5],
  [OP.READ_REMOTE_VERSION, 2, 7],
  [OP.SET_EVENT_MASK, 5, 6],
  [OP.RESET, 5, 7],
  [OP.SET_CONTROLLER_TO_HOST_FLOW_CONTROL, 10, 5],
  [OP.HOST_BUFFER_SIZE, 10, 6],
  [OP.READ_LOCAL_VERSION, 14, 3],
  [OP.READ_LOCAL_SUPPORTED_FEATURES, 14, 5],
  [OP.READ_BUFFER_SIZE, 14, 7],
  [OP.READ_BD_ADDR, 15, 1],
  [OP.READ_RSSI, 15, 5],
  [OP.SET_EVENT_MASK_PAGE_2, 22, 2],
  [OP.READ_LE_HOST_SUPPORT, 24, 5],
  [OP.WRITE_LE_HOST_SUPPORT, 24, 6],
  [OP.LE_SET_EVENT_MASK, 25, 0],
  [OP.LE_READ_BUFFER_SIZE, 25, 1],
  [OP.LE_READ_LOCAL_SUPPORTED_FEATURES, 25, 2],
  [OP.LE_SET_RANDOM_ADDRESS, 25, 4],
  [OP.LE_SET_ADVERTISING_PARAMETERS, 25, 5],
  [OP.LE_READ_ADVERTISING_CHANNEL_TX_POWER, 25, 6],
  [OP.LE_SET_ADVERTISING_DATA, 25, 7],
  [OP.LE_SET_SCAN_RESPONSE_DATA, 26, 0],
  [OP.LE_SET_ADVERTISING_ENABLE, 26, 1],
  [OP.LE_SET_SCAN_PARAMETERS, 26, 2],
  [OP.LE_SET_SCAN_ENABLE, 26, 3],
  [OP.LE_CREATE_CONNECTION, 26, 4],
  [OP.LE_CREATE_CONNECTION_CANCEL, 26, 5],
  [OP.LE_READ_FILTER_ACCEPT_LIST_SIZE, 26, 6],
  [OP.LE_CLEAR_FILTER_ACCEPT_LIST, 26, 7],
  [OP.LE_CONNECTION_UPDATE, 27, 2],
  [OP.LE_READ_REMOTE_FEATURES, 27, 5],
  [OP.LE_RAND, 27, 7],
  [OP.LE_ENABLE_ENCRYPTION, 28, 0],
  [OP.LE_LTK_REQUEST_REPLY, 28, 1],
  [OP.LE_LTK_REQUEST_NEGATIVE_REPLY, 28, 2],
  [OP.LE_READ_SUPPORTED_STATES, 28, 3],
];

export function supportedCommands(implemented: ReadonlySet<number>): Buffer {
  const out = Buffer.alloc(64);
  for (const [op, octet, bit] of SUPPORTED) if (implemented.has(op)) out[octet]! |= 1 << bit;
  return out;
}
