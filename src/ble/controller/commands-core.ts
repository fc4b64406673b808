import { bdAddrFromWire, bdAddrToWire } from "../hci/address.ts";
import { OP, STATUS } from "../hci/constants.ts";
import { type CommandEntry, fail, ok } from "./command-entry.ts";
import { LMP_FEATURES, LOCAL_VERSION, supportedCommands } from "./identity.ts";

/**
 * Link Control, Controller & Baseband, Informational and Status commands (Vol 4 Part E §7.1,
 * §7.3–§7.5). `implemented` is every opcode of the controller, for Read Local Supported Commands.
 */
export function coreCommands(
  implemented: () => ReadonlySet<number>,
): Array<[number, CommandEntry]> {
  return [
    // ---- Link Control ----
    [
      OP.DISCONNECT, // §7.1.6
      {
        kind: "status",
        length: 3,
        returnLength: 0,
        run: (ctl, p) => {
          const conn = ctl.connections.get(p.readUInt16LE(0));
          if (conn === undefined) return fail(STATUS.UNKNOWN_CONNECTION_ID);
          const reason = p[2]!;
          if (![0x05, 0x13, 0x14, 0x15, 0x1a, 0x29, 0x3b].includes(reason))
            return fail(STATUS.INVALID_PARAMETERS);
          if (conn.terminating) return fail(STATUS.COMMAND_DISALLOWED);
          return { status: STATUS.SUCCESS, after: () => ctl.terminate(conn, reason) };
        },
      },
    ],
    // ---- Controller & Baseband ----
    [
      OP.SET_EVENT_MASK, // §7.3.1
      {
        kind: "complete",
        length: 8,
        returnLength: 0,
        run: (ctl, p) => {
          ctl.eventMask = p.readBigUInt64LE(0);
          return ok();
        },
      },
    ],
    [
      OP.RESET, // §7.3.2
      {
        kind: "complete",
        length: 0,
        returnLength: 0,
        run: (ctl) => {
          ctl.reset();
          return ok();
        },
      },
    ],
    [
      OP.SET_CONTROLLER_TO_HOST_FLOW_CONTROL, // §7.3.38: only "off" is supported
      {
        kind: "complete",
        length: 1,
        returnLength: 0,
        run: (_c, p) => (p[0] === 0 ? ok() : fail(STATUS.UNSUPPORTED_FEATURE)),
      },
    ],
    [
      OP.HOST_BUFFER_SIZE, // §7.3.39: the ACL packet size the host takes from us
      {
        kind: "complete",
        length: 7,
        returnLength: 0,
        run: (ctl, p) => {
          const length = p.readUInt16LE(0);
          if (length < 27) return fail(STATUS.INVALID_PARAMETERS);
          ctl.hostAclLength = length;
          return ok();
        },
      },
    ],
    [OP.SET_EVENT_MASK_PAGE_2, { kind: "complete", length: 8, returnLength: 0, run: () => ok() }], // §7.3.69
    [
      OP.READ_LE_HOST_SUPPORT, // §7.3.78
      {
        kind: "complete",
        length: 0,
        returnLength: 2,
        run: (ctl) => ok(Buffer.from([ctl.leHostSupported ? 1 : 0, 0])),
      },
    ],
    [
      OP.WRITE_LE_HOST_SUPPORT, // §7.3.79
      {
        kind: "complete",
        length: 2,
        returnLength: 0,
        run: (ctl, p) => {
          if (p[0]! > 1) return fail(STATUS.INVALID_PARAMETERS);
          ctl.leHostSupported = p[0] === 1;
          return ok();
        },
      },
    ],
    // ---- Informational ----
    [
      OP.READ_LOCAL_VERSION, // §7.4.1
      {
        kind: "complete",
        length: 0,
        returnLength: 8,
        run: () => {
          const r = Buffer.alloc(8);
          r[0] = LOCAL_VERSION.hciVersion;
          r.writeUInt16LE(LOCAL_VERSION.hciRevision, 1);
          r[3] = LOCAL_VERSION.lmpVersion;
          r.writeUInt16LE(LOCAL_VERSION.manufacturer, 4);
          r.writeUInt16LE(LOCAL_VERSION.lmpSubversion, 6);
          return ok(r);
        },
      },
    ],
    [
      OP.READ_LOCAL_SUPPORTED_COMMANDS, // §7.4.2
      {
        kind: "complete",
        length: 0,
        returnLength: 64,
        run: () => ok(supportedCommands(implemented())),
      },
    ],
    [
      OP.READ_LOCAL_SUPPORTED_FEATURES,
      { kind: "complete", length: 0, returnLength: 8, run: () => ok(LMP_FEATURES) },
    ], // §7.4.3
    [
      OP.READ_BUFFER_SIZE, // §7.4.5: the shared ACL buffers, as an LE-only controller reports them
      {
        kind: "complete",
        length: 0,
        returnLength: 7,
        run: (ctl) => {
          const r = Buffer.alloc(7);
          r.writeUInt16LE(ctl.aclBufferLength, 0);
          r.writeUInt16LE(ctl.aclBufferCount, 3);
          return ok(r);
        },
      },
    ],
    [
      OP.READ_BD_ADDR,
      {
        kind: "complete",
        length: 0,
        returnLength: 6,
        run: (ctl) => ok(Buffer.from(bdAddrToWire(ctl.address))),
      },
    ], // §7.4.6
    [
      OP.VENDOR_WRITE_BD_ADDR,
      {
        kind: "complete",
        length: 6,
        returnLength: 0,
        // As a BCM controller: the new public address holds from now on (an HCI Reset keeps
        // it); not while it is on the air under the old one.
        run: (ctl, p) => {
          if (ctl.adv.enabled || ctl.listening() || ctl.connections.size > 0) {
            return fail(STATUS.COMMAND_DISALLOWED);
          }
          ctl.address = bdAddrFromWire(p);
          return ok();
        },
      },
    ],
    // ---- Status ----
    [
      OP.READ_RSSI, // §7.5.4
      {
        kind: "complete",
        length: 2,
        returnLength: 3,
        run: (ctl, p) => {
          const conn = ctl.connections.get(p.readUInt16LE(0));
          const r = Buffer.alloc(3);
          p.copy(r, 0, 0, 2);
          if (conn === undefined) return fail(STATUS.UNKNOWN_CONNECTION_ID, r);
          r.writeInt8(Math.max(-127, Math.min(20, Math.round(conn.link.rssi))), 2);
          return ok(r);
        },
      },
    ],
  ];
}
