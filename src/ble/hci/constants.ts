/**
 * HCI numbers used by the virtual controller and the transports. Values from the Bluetooth Core
 * Specification 5.4: packet indicators Vol 4 Part A §2 (UART transport), command opcodes Vol 4
 * Part E §7, event codes Vol 4 Part E §7.7, error codes Vol 1 Part F §1.3.
 */

/** H4 packet indicators (Vol 4 Part A §2). */
export const H4 = { COMMAND: 0x01, ACL: 0x02, SCO: 0x03, EVENT: 0x04, ISO: 0x05 } as const;

/** An opcode is OGF (6 bits) << 10 | OCF (10 bits) (Vol 4 Part E §5.4.1). */
export const opcode = (ogf: number, ocf: number): number => (ogf << 10) | ocf;

/** Command opcodes the controller answers. */
export const OP = {
  // Link Control (OGF 0x01), Vol 4 Part E §7.1
  DISCONNECT: opcode(0x01, 0x0006),
  READ_REMOTE_VERSION: opcode(0x01, 0x001d),
  // Controller & Baseband (OGF 0x03), §7.3
  SET_EVENT_MASK: opcode(0x03, 0x0001),
  RESET: opcode(0x03, 0x0003),
  SET_CONTROLLER_TO_HOST_FLOW_CONTROL: opcode(0x03, 0x0031),
  HOST_BUFFER_SIZE: opcode(0x03, 0x0033),
  SET_EVENT_MASK_PAGE_2: opcode(0x03, 0x0063),
  READ_LE_HOST_SUPPORT: opcode(0x03, 0x006c),
  WRITE_LE_HOST_SUPPORT: opcode(0x03, 0x006d),
  // Informational (OGF 0x04), §7.4
  READ_LOCAL_VERSION: opcode(0x04, 0x0001),
  READ_LOCAL_SUPPORTED_COMMANDS: opcode(0x04, 0x0002),
  READ_LOCAL_SUPPORTED_FEATURES: opcode(0x04, 0x0003),
  READ_BUFFER_SIZE: opcode(0x04, 0x0005),
  READ_BD_ADDR: opcode(0x04, 0x0009),
  // Status (OGF 0x05), §7.5
  READ_RSSI: opcode(0x05, 0x0005),
  // Vendor-specific (OGF 0x3F, Vol 4 Part E §5.4.1): Broadcom's Write_BD_ADDR, the command BlueZ's
  // `bdaddr` tool and `btmgmt public-addr` send a BCM controller to set its public address.
  VENDOR_WRITE_BD_ADDR: opcode(0x3f, 0x0001),
  // LE Controller (OGF 0x08), §7.8
  LE_SET_EVENT_MASK: opcode(0x08, 0x0001),
  LE_READ_BUFFER_SIZE: opcode(0x08, 0x0002),
  LE_READ_LOCAL_SUPPORTED_FEATURES: opcode(0x08, 0x0003),
  LE_SET_RANDOM_ADDRESS: opcode(0x08, 0x0005),
  LE_SET_ADVERTISING_PARAMETERS: opcode(0x08, 0x0006),
  LE_READ_ADVERTISING_CHANNEL_TX_POWER: opcode(0x08, 0x0007),
  LE_SET_ADVERTISING_DATA: opcode(0x08, 0x0008),
  LE_SET_SCAN_RESPONSE_DATA: opcode(0x08, 0x0009),
  LE_SET_ADVERTISING_ENABLE: opcode(0x08, 0x000a),
  LE_SET_SCAN_PARAMETERS: opcode(0x08, 0x000b),
  LE_SET_SCAN_ENABLE: opcode(0x08, 0x000c),
  LE_CREATE_CONNECTION: opcode(0x08, 0x000d),
  LE_CREATE_CONNECTION_CANCEL: opcode(0x08, 0x000e),
  LE_READ_FILTER_ACCEPT_LIST_SIZE: opcode(0x08, 0x000f),
  LE_CLEAR_FILTER_ACCEPT_LIST: opcode(0x08, 0x0010),
  LE_CONNECTION_UPDATE: opcode(0x08, 0x0013),
  LE_READ_REMOTE_FEATURES: opcode(0x08, 0x0016),
  LE_RAND: opcode(0x08, 0x0018),
  LE_ENABLE_ENCRYPTION: opcode(0x08, 0x0019),
  LE_LTK_REQUEST_REPLY: opcode(0x08, 0x001a),
  LE_LTK_REQUEST_NEGATIVE_REPLY: opcode(0x08, 0x001b),
  LE_READ_SUPPORTED_STATES: opcode(0x08, 0x001c),
  LE_SET_DATA_LENGTH: opcode(0x08, 0x0022),
  LE_READ_SUGGESTED_DEFAULT_DATA_LENGTH: opcode(0x08, 0x0023),
  LE_WRITE_SUGGESTED_DEFAULT_DATA_LENGTH: opcode(0x08, 0x0024),
  LE_READ_MAXIMUM_DATA_LENGTH: opcode(0x08, 0x002f),
  LE_SET_DEFAULT_PHY: opcode(0x08, 0x0031),
} as const;

/** Event codes (Vol 4 Part E §7.7). */
export const EVT = {
  DISCONNECTION_COMPLETE: 0x05,
  ENCRYPTION_CHANGE: 0x08,
  READ_REMOTE_VERSION_COMPLETE: 0x0c,
  COMMAND_COMPLETE: 0x0e,
  COMMAND_STATUS: 0x0f,
  HARDWARE_ERROR: 0x10,
  NUMBER_OF_COMPLETED_PACKETS: 0x13,
  DATA_BUFFER_OVERFLOW: 0x1a,
  LE_META: 0x3e,
} as const;

/** LE Meta subevent codes (Vol 4 Part E §7.7.65). */
export const LE_EVT = {
  CONNECTION_COMPLETE: 0x01,
  ADVERTISING_REPORT: 0x02,
  CONNECTION_UPDATE_COMPLETE: 0x03,
  READ_REMOTE_FEATURES_COMPLETE: 0x04,
  LONG_TERM_KEY_REQUEST: 0x05,
} as const;

/** Error codes (Vol 1 Part F §1.3). */
export const STATUS = {
  SUCCESS: 0x00,
  UNKNOWN_COMMAND: 0x01,
  UNKNOWN_CONNECTION_ID: 0x02,
  HARDWARE_FAILURE: 0x03,
  PIN_OR_KEY_MISSING: 0x06,
  MEMORY_CAPACITY_EXCEEDED: 0x07,
  CONNECTION_TIMEOUT: 0x08,
  CONNECTION_ALREADY_EXISTS: 0x0b,
  COMMAND_DISALLOWED: 0x0c,
  UNSUPPORTED_FEATURE: 0x11,
  INVALID_PARAMETERS: 0x12,
  REMOTE_USER_TERMINATED: 0x13,
  LOCAL_HOST_TERMINATED: 0x16,
  UNSPECIFIED_ERROR: 0x1f,
  ADVERTISING_TIMEOUT: 0x3c,
  UNKNOWN_ADVERTISING_ID: 0x42,
  CONNECTION_FAILED_TO_ESTABLISH: 0x3e,
} as const;

/** ACL Packet_Boundary_Flag (Vol 4 Part E §5.4.2). */
export const PB = { FIRST_NON_FLUSHABLE: 0b00, CONTINUING: 0b01, FIRST_FLUSHABLE: 0b10 } as const;

/** Advertising report Event_Type (Vol 4 Part E §7.7.65.2). */
export const ADV_REPORT = {
  ADV_IND: 0x00,
  ADV_DIRECT_IND: 0x01,
  ADV_SCAN_IND: 0x02,
  ADV_NONCONN_IND: 0x03,
  SCAN_RSP: 0x04,
} as const;

/** Advertising_Type of LE Set Advertising Parameters (Vol 4 Part E §7.8.5). */
export const ADV_TYPE = {
  ADV_IND: 0x00,
  ADV_DIRECT_IND_HIGH: 0x01,
  ADV_SCAN_IND: 0x02,
  ADV_NONCONN_IND: 0x03,
  ADV_DIRECT_IND_LOW: 0x04,
} as const;

/** Default event masks after Reset (Vol 4 Part E §7.3.1, §7.8.1). */
export const DEFAULT_EVENT_MASK = 0x00001fffffffffffn;
export const DEFAULT_LE_EVENT_MASK = 0x1fn;

/** L2CAP fixed channels on an LE-U link (Vol 3 Part A §2.1). */
export const L2CAP_CID = { ATT: 0x0004, LE_SIGNALING: 0x0005, SMP: 0x0006 } as const;

/** Largest LL Data PDU payload without the Data Length Extension (Vol 6 Part B §2.4). */
export const LL_DEFAULT_PAYLOAD = 27;
