import { describe, expect, it } from "vitest";
import { EVT, LE_EVT, OP, STATUS } from "../../src/ble/hci/constants.ts";
import {
  advParams,
  CENTRAL,
  connect,
  createConnection,
  dataParam,
  PERIPHERAL,
  twoControllers,
} from "./support/two-controllers.ts";

const ADV = Buffer.from([0x02, 0x01, 0x06, 0x03, 0x03, 0x10, 0x18]); // Flags, 16-bit UUID 0x1810
const SCAN_RSP = Buffer.from([0x04, 0x09, 0x42, 0x50, 0x4d]); // Complete Local Name "BPM"

describe("VirtualController commands", () => {
  it("answers an unknown opcode with Command Status, Unknown HCI Command (0x01)", () => {
    const { c } = twoControllers();
    c.command(0x3f55, Buffer.from([1, 2, 3]));
    expect(c.status(0x3f55)).toBe(STATUS.UNKNOWN_COMMAND);
    expect(c.complete(0x3f55)).toBeUndefined();
    expect(c.controller.stats.unknownCommands).toBe(1);
  });

  it("answers a wrong parameter length with Invalid HCI Command Parameters in the command's own event", () => {
    const { c } = twoControllers();
    c.command(OP.READ_RSSI, Buffer.from([1])); // takes 2 octets; Command Complete with zeroed returns
    expect(c.complete(OP.READ_RSSI)).toEqual({
      status: STATUS.INVALID_PARAMETERS,
      ret: Buffer.alloc(3),
    });
    c.command(OP.LE_CREATE_CONNECTION, Buffer.alloc(3)); // a Command Status command
    expect(c.status(OP.LE_CREATE_CONNECTION)).toBe(STATUS.INVALID_PARAMETERS);
  });

  it("reports its identity: HCI version ≥ 6 (noble and bleno require it), BD_ADDR, LE buffers", () => {
    const { c } = twoControllers();
    c.command(OP.READ_LOCAL_VERSION);
    c.command(OP.READ_BD_ADDR);
    c.command(OP.LE_READ_BUFFER_SIZE);
    expect(c.complete(OP.READ_LOCAL_VERSION)!.ret[0]).toBeGreaterThanOrEqual(6);
    expect(c.complete(OP.READ_BD_ADDR)!.ret).toEqual(
      Buffer.from(CENTRAL.split(":").reverse().join(""), "hex"),
    );
    expect([...c.complete(OP.LE_READ_BUFFER_SIZE)!.ret]).toEqual([27, 0, 8]);
  });

  it("takes a new public address by Broadcom's vendor Write_BD_ADDR, kept across Reset, not while on the air", () => {
    const { c } = twoControllers();
    c.command(OP.VENDOR_WRITE_BD_ADDR, Buffer.from("21da7035ffcb", "hex"));
    expect(c.complete(OP.VENDOR_WRITE_BD_ADDR)!.status).toBe(STATUS.SUCCESS);
    c.command(OP.RESET);
    c.command(OP.READ_BD_ADDR);
    expect(c.complete(OP.READ_BD_ADDR)!.ret).toEqual(Buffer.from("21da7035ffcb", "hex"));
    c.command(OP.LE_SET_SCAN_ENABLE, Buffer.from([1, 0]));
    c.command(OP.VENDOR_WRITE_BD_ADDR, Buffer.from("010203040506", "hex"));
    expect(c.complete(OP.VENDOR_WRITE_BD_ADDR)!.status).toBe(STATUS.COMMAND_DISALLOWED);
    c.command(OP.VENDOR_WRITE_BD_ADDR, Buffer.from("0102", "hex"));
    expect(c.complete(OP.VENDOR_WRITE_BD_ADDR)!.status).toBe(STATUS.INVALID_PARAMETERS);
  });

  it("refuses parameters out of range: advertising interval, scan window > interval", () => {
    const { c } = twoControllers();
    const bad = advParams(100);
    bad.writeUInt16LE(0x0010, 0); // below 20 ms
    c.command(OP.LE_SET_ADVERTISING_PARAMETERS, bad);
    expect(c.complete(OP.LE_SET_ADVERTISING_PARAMETERS)!.status).toBe(STATUS.INVALID_PARAMETERS);
    c.command(OP.LE_SET_SCAN_PARAMETERS, Buffer.from([1, 0x10, 0, 0x20, 0, 0, 0]));
    expect(c.complete(OP.LE_SET_SCAN_PARAMETERS)!.status).toBe(STATUS.INVALID_PARAMETERS);
    // LE Create Connection's own scan: interval 0, then a window wider than the interval (§7.8.12).
    for (const [interval, window] of [
      [0, 0x30],
      [0x30, 0x60],
    ] as const) {
      const params = createConnection(PERIPHERAL);
      params.writeUInt16LE(interval, 0);
      params.writeUInt16LE(window, 2);
      c.command(OP.LE_CREATE_CONNECTION, params);
      expect(c.status(OP.LE_CREATE_CONNECTION)).toBe(STATUS.INVALID_PARAMETERS);
    }
  });

  it("a random own address must be set before it is used; it cannot change while initiating", () => {
    const { c } = twoControllers();
    const random = advParams(100);
    random[5] = 0x01; // Own_Address_Type random
    c.command(OP.LE_SET_ADVERTISING_PARAMETERS, random);
    c.command(OP.LE_SET_ADVERTISING_ENABLE, Buffer.from([1]));
    expect(c.complete(OP.LE_SET_ADVERTISING_ENABLE)!.status).toBe(STATUS.INVALID_PARAMETERS);
    c.command(OP.LE_SET_SCAN_PARAMETERS, Buffer.from([1, 0x10, 0, 0x10, 0, 1, 0]));
    c.command(OP.LE_SET_SCAN_ENABLE, Buffer.from([1, 0]));
    expect(c.complete(OP.LE_SET_SCAN_ENABLE)!.status).toBe(STATUS.INVALID_PARAMETERS);
    const initiate = createConnection(PERIPHERAL);
    initiate[12] = 0x01;
    c.command(OP.LE_CREATE_CONNECTION, initiate);
    expect(c.status(OP.LE_CREATE_CONNECTION)).toBe(STATUS.INVALID_PARAMETERS);
    c.command(OP.LE_SET_RANDOM_ADDRESS, Buffer.from("0102030405c6", "hex"));
    expect(c.complete(OP.LE_SET_RANDOM_ADDRESS)!.status).toBe(STATUS.SUCCESS);
    c.command(OP.LE_CREATE_CONNECTION, initiate);
    expect(c.status(OP.LE_CREATE_CONNECTION)).toBe(STATUS.SUCCESS);
    c.command(OP.LE_SET_RANDOM_ADDRESS, Buffer.from("0102030405c7", "hex"));
    expect(c.complete(OP.LE_SET_RANDOM_ADDRESS)!.status).toBe(STATUS.COMMAND_DISALLOWED);
    c.command(OP.LE_SET_ADVERTISING_ENABLE, Buffer.from([1]));
    expect(c.complete(OP.LE_SET_ADVERTISING_ENABLE)!.status).toBe(STATUS.SUCCESS);
  });
});

describe("advertising and scanning on the medium", () => {
  function advertise(t: ReturnType<typeof twoControllers>) {
    t.p.command(OP.LE_SET_ADVERTISING_PARAMETERS, advParams(100));
    t.p.command(OP.LE_SET_ADVERTISING_DATA, dataParam(ADV));
    t.p.command(OP.LE_SET_SCAN_RESPONSE_DATA, dataParam(SCAN_RSP));
    t.p.command(OP.LE_SET_ADVERTISING_ENABLE, Buffer.from([1]));
  }

  it("an active scan reports ADV_IND then SCAN_RSP with the data and the path-loss RSSI", () => {
    const t = twoControllers();
    advertise(t);
    t.medium.move(t.peripheral, { x: 10, y: 0 });
    t.c.command(OP.LE_SET_SCAN_PARAMETERS, Buffer.from([1, 0x10, 0, 0x10, 0, 0, 0]));
    t.c.command(OP.LE_SET_SCAN_ENABLE, Buffer.from([1, 1]));
    t.clock.runSync({ until: t.clock.now() + 1000 });
    const reports = t.c.events(EVT.LE_META, LE_EVT.ADVERTISING_REPORT);
    // Filtering duplicates: one ADV_IND and one SCAN_RSP in a second of advertising.
    expect(reports.map((r) => r[5])).toEqual([0x00, 0x04]);
    const [adv, rsp] = reports as [Buffer, Buffer];
    expect(adv.subarray(14, 14 + adv[13]!)).toEqual(ADV);
    expect(rsp.subarray(14, 14 + rsp[13]!)).toEqual(SCAN_RSP);
    // 0 dBm − (40 + 10·2.2·log10(10)) = −62 dBm
    expect(adv.readInt8(adv.length - 1)).toBe(-62);
  });

  it("a passive scan sends no SCAN_REQ; without duplicate filtering every event is reported", () => {
    const t = twoControllers();
    advertise(t);
    t.c.command(OP.LE_SET_SCAN_PARAMETERS, Buffer.from([0, 0x10, 0, 0x10, 0, 0, 0]));
    t.c.command(OP.LE_SET_SCAN_ENABLE, Buffer.from([1, 0]));
    t.clock.runSync({ until: t.clock.now() + 1000 });
    const types = t.c.events(EVT.LE_META, LE_EVT.ADVERTISING_REPORT).map((r) => r[5]);
    expect(types.length).toBeGreaterThanOrEqual(9);
    expect(types.every((x) => x === 0x00)).toBe(true);
  });

  it("the LE event mask silences advertising reports (Vol 4 Part E §7.8.1)", () => {
    const t = twoControllers();
    advertise(t);
    t.c.command(OP.LE_SET_EVENT_MASK, Buffer.from([0x1d, 0, 0, 0, 0, 0, 0, 0])); // bit 1 cleared
    t.c.command(OP.LE_SET_SCAN_ENABLE, Buffer.from([1, 0]));
    t.clock.runSync({ until: t.clock.now() + 500 });
    expect(t.c.events(EVT.LE_META, LE_EVT.ADVERTISING_REPORT)).toHaveLength(0);
  });

  it("nothing is heard beyond the range limit", () => {
    const t = twoControllers();
    advertise(t);
    t.medium.move(t.peripheral, { x: 31, y: 0 });
    t.c.command(OP.LE_SET_SCAN_ENABLE, Buffer.from([1, 0]));
    t.clock.runSync({ until: t.clock.now() + 1000 });
    expect(t.c.events(EVT.LE_META, LE_EVT.ADVERTISING_REPORT)).toHaveLength(0);
  });
});

describe("connections", () => {
  it("gives LE Connection Complete with each side's role and stops the advertiser", () => {
    const t = twoControllers();
    const { ch, ph } = connect(t);
    const cc = t.c.events(EVT.LE_META, LE_EVT.CONNECTION_COMPLETE).at(-1)!;
    const pc = t.p.events(EVT.LE_META, LE_EVT.CONNECTION_COMPLETE).at(-1)!;
    expect([cc[4], cc[7]]).toEqual([STATUS.SUCCESS, 0x00]); // central
    expect([pc[4], pc[7]]).toEqual([STATUS.SUCCESS, 0x01]); // peripheral
    expect(ch).toBeGreaterThan(0);
    expect(ph).toBeGreaterThan(0);
    expect(t.peripheral.adv.enabled).toBe(false);
    expect(t.c.status(OP.LE_CREATE_CONNECTION)).toBe(STATUS.SUCCESS);
  });

  it("high duty cycle directed advertising ends after 1.28 s with LE Connection Complete 0x3C, unless a central connects", () => {
    const directed = (t: ReturnType<typeof twoControllers>) => {
      const params = advParams(100, 0x01);
      Buffer.from(CENTRAL.split(":").reverse().join(""), "hex").copy(params, 7);
      t.p.command(OP.LE_SET_ADVERTISING_PARAMETERS, params);
      t.p.command(OP.LE_SET_ADVERTISING_ENABLE, Buffer.from([1]));
    };
    const alone = twoControllers();
    directed(alone);
    alone.clock.runSync({ until: alone.clock.now() + 1270 });
    expect(alone.peripheral.adv.enabled).toBe(true);
    alone.clock.runSync({ until: alone.clock.now() + 20 });
    const timeout = alone.p.events(EVT.LE_META, LE_EVT.CONNECTION_COMPLETE);
    expect(timeout.map((e) => [e[4], e[7]])).toEqual([[STATUS.ADVERTISING_TIMEOUT, 0x01]]);
    expect(alone.peripheral.adv.enabled).toBe(false);

    const met = twoControllers();
    directed(met);
    met.c.command(OP.LE_CREATE_CONNECTION, createConnection(PERIPHERAL));
    met.clock.runSync({ until: met.clock.now() + 5000 });
    const complete = met.p.events(EVT.LE_META, LE_EVT.CONNECTION_COMPLETE);
    expect(complete.map((e) => e[4])).toEqual([STATUS.SUCCESS]);
  });

  it("refuses a second LE Create Connection while one is pending; cancel ends it with 0x02", () => {
    const t = twoControllers();
    t.c.command(OP.LE_CREATE_CONNECTION, createConnection(PERIPHERAL));
    t.c.command(OP.LE_CREATE_CONNECTION, createConnection(PERIPHERAL));
    expect(t.c.status(OP.LE_CREATE_CONNECTION)).toBe(STATUS.COMMAND_DISALLOWED);
    t.c.command(OP.LE_CREATE_CONNECTION_CANCEL);
    expect(t.c.complete(OP.LE_CREATE_CONNECTION_CANCEL)!.status).toBe(STATUS.SUCCESS);
    expect(t.c.events(EVT.LE_META, LE_EVT.CONNECTION_COMPLETE).at(-1)![4]).toBe(
      STATUS.UNKNOWN_CONNECTION_ID,
    );
  });

  it("carries an L2CAP PDU across, re-fragmented to the receiving host's buffer size, with NOCP per packet", () => {
    const t = twoControllers();
    const { ch, ph } = connect(t);
    const payload = Buffer.alloc(60, 0xab);
    const pdu = Buffer.concat([Buffer.from([60, 0, 0x04, 0x00]), payload]); // ATT channel
    t.c.acl(ch, 0b00, pdu.subarray(0, 27));
    t.c.acl(ch, 0b01, pdu.subarray(27, 54));
    t.c.acl(ch, 0b01, pdu.subarray(54));
    t.clock.runSync({ until: t.clock.now() + 50 });
    const got = t.p.acls();
    expect(got.map((p) => p.readUInt16LE(3))).toEqual([27, 27, 10]);
    expect(got.map((p) => p.readUInt16LE(1) >> 12)).toEqual([0b10, 0b01, 0b01]);
    expect(got.every((p) => (p.readUInt16LE(1) & 0x0fff) === ph)).toBe(true);
    expect(Buffer.concat(got.map((p) => p.subarray(5)))).toEqual(pdu);
    const nocp = t.c.events(EVT.NUMBER_OF_COMPLETED_PACKETS);
    expect(nocp.map((e) => [e.readUInt16LE(4), e.readUInt16LE(6)])).toEqual([
      [ch, 1],
      [ch, 1],
      [ch, 1],
    ]);
  });

  it("a host sending past its buffer count gets Data Buffer Overflow (Vol 4 Part E §7.7.26)", () => {
    const t = twoControllers();
    const { ch } = connect(t);
    t.medium.partition([[CENTRAL], [PERIPHERAL]]); // nothing is acknowledged, buffers stay taken
    for (let i = 0; i < 9; i++) t.c.acl(ch, 0b00, Buffer.from([1, 0, 4, 0, 0x0a]));
    expect(t.c.events(EVT.DATA_BUFFER_OVERFLOW)).toHaveLength(1);
    expect(t.central.stats.bufferOverflows).toBe(1);
  });

  it("Disconnect: Disconnection Complete on both sides, 0x16 locally and the given reason remotely", () => {
    const t = twoControllers();
    const { ch, ph } = connect(t);
    t.c.command(OP.DISCONNECT, Buffer.from([ch & 0xff, ch >> 8, 0x13]));
    t.clock.runSync({ until: t.clock.now() + 50 });
    expect(t.c.status(OP.DISCONNECT)).toBe(STATUS.SUCCESS);
    const cd = t.c.events(EVT.DISCONNECTION_COMPLETE).at(-1)!;
    const pd = t.p.events(EVT.DISCONNECTION_COMPLETE).at(-1)!;
    expect([cd.readUInt16LE(4), cd[6]]).toEqual([ch, STATUS.LOCAL_HOST_TERMINATED]);
    expect([pd.readUInt16LE(4), pd[6]]).toEqual([ph, STATUS.REMOTE_USER_TERMINATED]);
    t.c.command(OP.DISCONNECT, Buffer.from([ch & 0xff, ch >> 8, 0x13]));
    expect(t.c.status(OP.DISCONNECT)).toBe(STATUS.UNKNOWN_CONNECTION_ID);
  });

  it("out of range for the supervision timeout: Disconnection Complete 0x08 on both sides, not before", () => {
    const t = twoControllers();
    connect(t); // supervision timeout 100 × 10 ms
    t.medium.move(t.peripheral, { x: 100, y: 0 });
    t.clock.runSync({ until: t.clock.now() + 990 });
    expect(t.c.events(EVT.DISCONNECTION_COMPLETE)).toHaveLength(0);
    t.clock.runSync({ until: t.clock.now() + 20 });
    expect(t.c.events(EVT.DISCONNECTION_COMPLETE).at(-1)![6]).toBe(STATUS.CONNECTION_TIMEOUT);
    expect(t.p.events(EVT.DISCONNECTION_COMPLETE).at(-1)![6]).toBe(STATUS.CONNECTION_TIMEOUT);
  });

  it("coming back in range before the timeout keeps the link", () => {
    const t = twoControllers();
    connect(t);
    t.medium.move(t.peripheral, { x: 100, y: 0 });
    t.clock.runSync({ until: t.clock.now() + 500 });
    t.medium.move(t.peripheral, { x: 1, y: 0 });
    t.clock.runSync({ until: t.clock.now() + 2000 });
    expect(t.c.events(EVT.DISCONNECTION_COMPLETE)).toHaveLength(0);
  });

  it("Read RSSI gives the link's RSSI", () => {
    const t = twoControllers();
    const { ch } = connect(t);
    t.medium.move(t.peripheral, { x: 10, y: 0 });
    t.c.command(OP.READ_RSSI, Buffer.from([ch & 0xff, ch >> 8]));
    expect(t.c.complete(OP.READ_RSSI)!.ret.readInt8(2)).toBe(-62);
  });

  it("LE Connection Update: both hosts get LE Connection Update Complete with the new parameters", () => {
    const t = twoControllers();
    const { ch } = connect(t);
    const p = Buffer.alloc(14);
    p.writeUInt16LE(ch, 0);
    p.writeUInt16LE(24, 2);
    p.writeUInt16LE(40, 4);
    p.writeUInt16LE(0, 6);
    p.writeUInt16LE(400, 8);
    t.c.command(OP.LE_CONNECTION_UPDATE, p);
    t.clock.runSync({ until: t.clock.now() + 200 });
    for (const host of [t.c, t.p]) {
      const e = host.events(EVT.LE_META, LE_EVT.CONNECTION_UPDATE_COMPLETE).at(-1)!;
      expect([e[4], e.readUInt16LE(7), e.readUInt16LE(11)]).toEqual([0, 40, 400]);
    }
  });
});

describe("LE encryption (Vol 6 Part B §5.1.3)", () => {
  function start(t: ReturnType<typeof twoControllers>, ch: number, key: Buffer) {
    const p = Buffer.alloc(28);
    p.writeUInt16LE(ch, 0);
    p.writeUInt16LE(0x1234, 10);
    key.copy(p, 12);
    t.c.command(OP.LE_ENABLE_ENCRYPTION, p);
    t.clock.runSync({ until: t.clock.now() + 20 });
  }
  const KEY = Buffer.alloc(16, 0x5a);

  it("the peripheral's host is asked for the LTK; the same key gives Encryption Change on both sides", () => {
    const t = twoControllers();
    const { ch, ph } = connect(t);
    start(t, ch, KEY);
    const req = t.p.events(EVT.LE_META, LE_EVT.LONG_TERM_KEY_REQUEST).at(-1)!;
    expect([req.readUInt16LE(4), req.readUInt16LE(14)]).toEqual([ph, 0x1234]);
    const reply = Buffer.alloc(18);
    reply.writeUInt16LE(ph, 0);
    KEY.copy(reply, 2);
    t.p.command(OP.LE_LTK_REQUEST_REPLY, reply);
    t.clock.runSync({ until: t.clock.now() + 20 });
    for (const host of [t.c, t.p]) {
      const e = host.events(EVT.ENCRYPTION_CHANGE).at(-1)!;
      expect([e[3], e[6]]).toEqual([STATUS.SUCCESS, 1]);
    }
  });

  it("a different key fails the MIC: both sides disconnect with 0x3D", () => {
    const t = twoControllers();
    const { ch, ph } = connect(t);
    start(t, ch, KEY);
    const reply = Buffer.alloc(18);
    reply.writeUInt16LE(ph, 0);
    t.p.command(OP.LE_LTK_REQUEST_REPLY, reply);
    t.clock.runSync({ until: t.clock.now() + 20 });
    expect(t.c.events(EVT.DISCONNECTION_COMPLETE).at(-1)![6]).toBe(0x3d);
    expect(t.p.events(EVT.DISCONNECTION_COMPLETE).at(-1)![6]).toBe(0x3d);
  });

  it("no key: the central's host gets Encryption Change with PIN or Key Missing (0x06)", () => {
    const t = twoControllers();
    const { ch, ph } = connect(t);
    start(t, ch, KEY);
    t.p.command(OP.LE_LTK_REQUEST_NEGATIVE_REPLY, Buffer.from([ph & 0xff, ph >> 8]));
    t.clock.runSync({ until: t.clock.now() + 20 });
    const e = t.c.events(EVT.ENCRYPTION_CHANGE).at(-1)!;
    expect([e[3], e[6]]).toEqual([STATUS.PIN_OR_KEY_MISSING, 0]);
  });
});
