import { bdAddrFromWire } from "../hci/address.ts";
import { ADV_TYPE, OP, STATUS } from "../hci/constants.ts";
import * as ev from "../hci/events.ts";
import type { LinkParams } from "../medium/link.ts";
import { type CommandEntry, fail, handleRet, ok } from "./command-entry.ts";
import { LE_FEATURES, LE_STATES } from "./identity.ts";
import { ownAddressReady, validConnectionParams, validScanTiming } from "./le-params.ts";

/** LE Controller commands (Vol 4 Part E §7.8). */
export const LE_COMMANDS: Array<[number, CommandEntry]> = [
  // ---- LE Controller ----
  [
    OP.LE_SET_EVENT_MASK, // §7.8.1
    {
      kind: "complete",
      length: 8,
      returnLength: 0,
      run: (ctl, p) => {
        ctl.leEventMask = p.readBigUInt64LE(0);
        return ok();
      },
    },
  ],
  [
    OP.LE_READ_BUFFER_SIZE, // §7.8.2 [v1]
    {
      kind: "complete",
      length: 0,
      returnLength: 3,
      run: (ctl) => {
        const r = Buffer.alloc(3);
        r.writeUInt16LE(ctl.aclBufferLength, 0);
        r[2] = ctl.aclBufferCount;
        return ok(r);
      },
    },
  ],
  [
    OP.LE_READ_LOCAL_SUPPORTED_FEATURES,
    { kind: "complete", length: 0, returnLength: 8, run: () => ok(LE_FEATURES) },
  ], // §7.8.3
  [
    OP.LE_SET_RANDOM_ADDRESS, // §7.8.4
    {
      kind: "complete",
      length: 6,
      returnLength: 0,
      run: (ctl, p) => {
        if (ctl.adv.enabled || ctl.scan.enabled || ctl.initiating !== undefined) {
          return fail(STATUS.COMMAND_DISALLOWED);
        }
        ctl.randomAddress = bdAddrFromWire(p);
        return ok();
      },
    },
  ],
  [
    OP.LE_SET_ADVERTISING_PARAMETERS, // §7.8.5
    {
      kind: "complete",
      length: 15,
      returnLength: 0,
      run: (ctl, p) => {
        if (ctl.adv.enabled) return fail(STATUS.COMMAND_DISALLOWED);
        const intervalMin = p.readUInt16LE(0);
        const intervalMax = p.readUInt16LE(2);
        const type = p[4]!;
        const directedHigh = type === ADV_TYPE.ADV_DIRECT_IND_HIGH;
        if (
          type > 0x04 ||
          p[5]! > 0x03 ||
          p[6]! > 0x01 ||
          (p[13]! & 0x07) === 0 ||
          p[13]! > 0x07 ||
          p[14]! > 0x03
        ) {
          return fail(STATUS.INVALID_PARAMETERS);
        }
        if (
          !directedHigh &&
          (intervalMin < 0x0020 || intervalMax > 0x4000 || intervalMin > intervalMax)
        ) {
          return fail(STATUS.INVALID_PARAMETERS);
        }
        ctl.adv.params = {
          intervalMin: directedHigh ? 6 : intervalMin, // high duty cycle: ≤ 3.75 ms (Vol 6 Part B §4.4.2.4.3)
          intervalMax,
          type,
          ownAddressType: p[5]!,
          peerAddressType: p[6]!,
          peerAddress: bdAddrFromWire(p, 7),
          channelMap: p[13]!,
          filterPolicy: p[14]!,
        };
        return ok();
      },
    },
  ],
  [
    OP.LE_READ_ADVERTISING_CHANNEL_TX_POWER,
    {
      kind: "complete",
      length: 0,
      returnLength: 1,
      run: (ctl) => ok(Buffer.from([ctl.medium.propagation.txPowerDbm & 0xff])),
    },
  ], // §7.8.6
  [
    OP.LE_SET_ADVERTISING_DATA, // §7.8.7
    {
      kind: "complete",
      length: 32,
      returnLength: 0,
      run: (ctl, p) => {
        if (p[0]! > 31) return fail(STATUS.INVALID_PARAMETERS);
        ctl.adv.data = Buffer.from(p.subarray(1, 1 + p[0]!));
        return ok();
      },
    },
  ],
  [
    OP.LE_SET_SCAN_RESPONSE_DATA, // §7.8.8
    {
      kind: "complete",
      length: 32,
      returnLength: 0,
      run: (ctl, p) => {
        if (p[0]! > 31) return fail(STATUS.INVALID_PARAMETERS);
        ctl.adv.scanResponse = Buffer.from(p.subarray(1, 1 + p[0]!));
        return ok();
      },
    },
  ],
  [
    OP.LE_SET_ADVERTISING_ENABLE, // §7.8.9
    {
      kind: "complete",
      length: 1,
      returnLength: 0,
      run: (ctl, p) => {
        if (p[0]! > 1) return fail(STATUS.INVALID_PARAMETERS);
        const on = p[0] === 1;
        if (on && !ownAddressReady(ctl, ctl.adv.params.ownAddressType)) {
          return fail(STATUS.INVALID_PARAMETERS);
        }
        return {
          status: STATUS.SUCCESS,
          after: () => (on ? !ctl.adv.enabled && ctl.startAdvertising() : ctl.stopAdvertising()),
        };
      },
    },
  ],
  [
    OP.LE_SET_SCAN_PARAMETERS, // §7.8.10
    {
      kind: "complete",
      length: 7,
      returnLength: 0,
      run: (ctl, p) => {
        if (ctl.scan.enabled) return fail(STATUS.COMMAND_DISALLOWED);
        const interval = p.readUInt16LE(1);
        const window = p.readUInt16LE(3);
        if (p[0]! > 1 || !validScanTiming(interval, window) || p[5]! > 3 || p[6]! > 3) {
          return fail(STATUS.INVALID_PARAMETERS);
        }
        Object.assign(ctl.scan, {
          active: p[0] === 1,
          interval,
          window,
          ownAddressType: p[5]!,
          filterPolicy: p[6]!,
        });
        return ok();
      },
    },
  ],
  [
    OP.LE_SET_SCAN_ENABLE, // §7.8.11: enabling again resets the duplicate filter
    {
      kind: "complete",
      length: 2,
      returnLength: 0,
      run: (ctl, p) => {
        if (p[0]! > 1 || p[1]! > 1) return fail(STATUS.INVALID_PARAMETERS);
        if (p[0] === 1 && !ownAddressReady(ctl, ctl.scan.ownAddressType)) {
          return fail(STATUS.INVALID_PARAMETERS);
        }
        ctl.scan.enabled = p[0] === 1;
        ctl.scan.filterDuplicates = p[1] === 1;
        ctl.scan.seen.clear();
        return ok();
      },
    },
  ],
  [
    OP.LE_CREATE_CONNECTION, // §7.8.12
    {
      kind: "status",
      length: 25,
      returnLength: 0,
      run: (ctl, p) => {
        if (ctl.initiating !== undefined) return fail(STATUS.COMMAND_DISALLOWED);
        const peerAddress = bdAddrFromWire(p, 6);
        const [min, max, latency, timeout] = [
          p.readUInt16LE(13),
          p.readUInt16LE(15),
          p.readUInt16LE(17),
          p.readUInt16LE(19),
        ];
        const [scanInterval, scanWindow] = [p.readUInt16LE(0), p.readUInt16LE(2)];
        if (
          !validScanTiming(scanInterval, scanWindow) ||
          p[4]! > 1 ||
          p[5]! > 3 ||
          p[12]! > 3 ||
          !ownAddressReady(ctl, p[12]!) ||
          !validConnectionParams(min, max, latency, timeout)
        ) {
          return fail(STATUS.INVALID_PARAMETERS);
        }
        if (p[4] === 1) return fail(STATUS.UNSUPPORTED_FEATURE); // the filter accept list is always empty
        for (const c of ctl.connections.values())
          if (c.peerAddress === peerAddress) return fail(STATUS.CONNECTION_ALREADY_EXISTS);
        ctl.initiating = {
          peerAddress,
          peerAddressType: p[5]! & 1,
          interval: min,
          latency,
          timeout,
        };
        return ok();
      },
    },
  ],
  [
    OP.LE_CREATE_CONNECTION_CANCEL, // §7.8.13: then LE Connection Complete with Unknown Connection Identifier
    {
      kind: "complete",
      length: 0,
      returnLength: 0,
      run: (ctl) => {
        const init = ctl.initiating;
        if (init === undefined) return fail(STATUS.COMMAND_DISALLOWED);
        ctl.initiating = undefined;
        return {
          status: STATUS.SUCCESS,
          after: () =>
            ctl.event(
              ev.leConnectionComplete({
                status: STATUS.UNKNOWN_CONNECTION_ID,
                handle: 0,
                role: 0,
                peerAddressType: init.peerAddressType,
                peerAddress: init.peerAddress,
                interval: 0,
                latency: 0,
                supervisionTimeout: 0,
                centralClockAccuracy: 0,
              }),
            ),
        };
      },
    },
  ],
  [
    OP.LE_READ_FILTER_ACCEPT_LIST_SIZE,
    { kind: "complete", length: 0, returnLength: 1, run: () => ok(Buffer.from([0])) },
  ], // §7.8.14
  [
    OP.LE_CLEAR_FILTER_ACCEPT_LIST,
    { kind: "complete", length: 0, returnLength: 0, run: () => ok() },
  ], // §7.8.15
  [
    OP.LE_CONNECTION_UPDATE, // §7.8.18
    {
      kind: "status",
      length: 14,
      returnLength: 0,
      run: (ctl, p) => {
        const conn = ctl.connections.get(p.readUInt16LE(0));
        if (conn === undefined) return fail(STATUS.UNKNOWN_CONNECTION_ID);
        const [min, max, latency, timeout] = [
          p.readUInt16LE(2),
          p.readUInt16LE(4),
          p.readUInt16LE(6),
          p.readUInt16LE(8),
        ];
        if (!validConnectionParams(min, max, latency, timeout))
          return fail(STATUS.INVALID_PARAMETERS);
        const params: LinkParams = { interval: max, latency, timeout };
        return { status: STATUS.SUCCESS, after: () => ctl.requestUpdate(conn, params) };
      },
    },
  ],
  [
    OP.LE_READ_REMOTE_FEATURES, // §7.8.21
    {
      kind: "status",
      length: 2,
      returnLength: 0,
      run: (ctl, p) => {
        const conn = ctl.connections.get(p.readUInt16LE(0));
        if (conn === undefined) return fail(STATUS.UNKNOWN_CONNECTION_ID);
        return {
          status: STATUS.SUCCESS,
          after: () => conn.link.send(ctl, { kind: "feature_req" }),
        };
      },
    },
  ],
  [
    OP.LE_RAND, // §7.8.23
    {
      kind: "complete",
      length: 0,
      returnLength: 8,
      run: (ctl) => ok(Buffer.from(Array.from({ length: 8 }, () => ctl.rng.int(0, 255)))),
    },
  ],
  [
    OP.LE_ENABLE_ENCRYPTION, // §7.8.24: central only; Encryption Change follows on both sides
    {
      kind: "status",
      length: 28,
      returnLength: 0,
      run: (ctl, p) => {
        const conn = ctl.connections.get(p.readUInt16LE(0));
        if (conn === undefined) return fail(STATUS.UNKNOWN_CONNECTION_ID);
        if (conn.role !== 0) return fail(STATUS.COMMAND_DISALLOWED);
        const random = Buffer.from(p.subarray(2, 10));
        const ediv = p.readUInt16LE(10);
        const key = Buffer.from(p.subarray(12, 28));
        return {
          status: STATUS.SUCCESS,
          after: () => conn.link.send(ctl, { kind: "enc_req", random, ediv, key }),
        };
      },
    },
  ],
  [
    OP.LE_LTK_REQUEST_REPLY, // §7.8.25
    {
      kind: "complete",
      length: 18,
      returnLength: 2,
      run: (ctl, p) => {
        const conn = ctl.connections.get(p.readUInt16LE(0));
        if (conn === undefined) return fail(STATUS.UNKNOWN_CONNECTION_ID, handleRet(p));
        if (conn.pendingEncryption === undefined)
          return fail(STATUS.COMMAND_DISALLOWED, handleRet(p));
        const key = Buffer.from(p.subarray(2, 18));
        return {
          status: STATUS.SUCCESS,
          ret: handleRet(p),
          after: () => ctl.answerEncryption(conn, key),
        };
      },
    },
  ],
  [
    OP.LE_LTK_REQUEST_NEGATIVE_REPLY, // §7.8.26
    {
      kind: "complete",
      length: 2,
      returnLength: 2,
      run: (ctl, p) => {
        const conn = ctl.connections.get(p.readUInt16LE(0));
        if (conn === undefined) return fail(STATUS.UNKNOWN_CONNECTION_ID, handleRet(p));
        if (conn.pendingEncryption === undefined)
          return fail(STATUS.COMMAND_DISALLOWED, handleRet(p));
        return {
          status: STATUS.SUCCESS,
          ret: handleRet(p),
          after: () => ctl.rejectEncryption(conn),
        };
      },
    },
  ],
  [
    OP.LE_READ_SUPPORTED_STATES,
    { kind: "complete", length: 0, returnLength: 8, run: () => ok(LE_STATES) },
  ], // §7.8.27
];
