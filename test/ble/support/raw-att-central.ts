/**
 * A virtual cuff's GATT server (bleno, behind the lab's checks) on a virtual controller, and a
 * scripted central connected to it that writes raw ATT (Vol 3 Part F §3.4).
 */
import { bdAddrToWire } from "../../../src/ble/hci/address.ts";
import { EVT, OP } from "../../../src/ble/hci/constants.ts";
import { BlenoPeripheral } from "../../../src/ble/hosts/peripheral.ts";
import { EmulatedRadio } from "../../../src/ble/radio.ts";
import { DirectTransport } from "../../../src/ble/socket/direct-transport.ts";
import { EmulatedHciSocket } from "../../../src/ble/socket/emulated-socket.ts";
import { HciAdapter } from "../../../src/ble/socket/hci-adapter.ts";
import { Rng } from "../../../src/core/rng.ts";
import { VirtualClock } from "../../../src/core/virtual-clock.ts";
import { advertisingData, scanResponseData } from "../../../src/devices/advertising-data.ts";
import { BleDevice } from "../../../src/devices/ble-device.ts";
import { catalogue } from "./lab.ts";
import { ScriptedHost } from "./scripted-host.ts";
import { createConnection } from "./two-controllers.ts";

/** What a test closes after it, last first. */
export type Closers = (() => Promise<void> | void)[];

/** A cuff advertising on a virtual controller, and a scripted central connected to it. */
export async function connectedCuff(closers: Closers) {
  const profile = catalogue.get("Vendor BPM - S");
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
  const radio = new EmulatedRadio(clock, new Rng("att-server"));
  closers.push(() => radio.close());
  const cuff = radio.controller("cuff", { x: 1, y: 1 });
  const adapter = new HciAdapter(0, new DirectTransport(cuff), "cuff");
  closers.push(() => adapter.close());
  const device = new BleDevice({ profile, clock, serial: "BPM0001" });
  /** Every management command the cuff's bleno wrote, as the kernel gets it. */
  const mgmtWritten: Buffer[] = [];
  const peripheral = await BlenoPeripheral.open(() => {
    const socket = new EmulatedHciSocket(adapter);
    const write = socket.write.bind(socket);
    socket.write = (data: Buffer) => {
      if (socket.channel === "control") mgmtWritten.push(Buffer.from(data));
      write(data);
    };
    return socket;
  }, clock);
  closers.push(() => peripheral.quiesce());
  await peripheral.serve(device.services());
  await peripheral.advertiseData(
    advertisingData(profile),
    scanResponseData(device.localName, profile.sensor_code),
  );
  const central = new ScriptedHost(radio.controller("central", { x: 2, y: 1 }));
  central.command(OP.LE_CREATE_CONNECTION, createConnection(cuff.address));
  await clock.run({ until: clock.now() + 1000 });
  const complete = central.events(0x3e, 0x01).at(-1);
  if (complete === undefined || complete[4] !== 0) throw new Error("no connection");
  const handle = complete.readUInt16LE(5);
  /** Both ends as SMP's c1 takes them (Vol 3 Part H §2.2.3): address type, octets LSB first. */
  const peers = {
    initiator: { type: 0, address: Buffer.from(bdAddrToWire(central.controller.address)) },
    responder: { type: complete[8]!, address: Buffer.from(complete.subarray(9, 15)) },
  };

  /** Sends one PDU on L2CAP channel `cid` and returns the PDUs the cuff answered with (reassembled), as hex. */
  const exchange = async (cid: number, hex: string): Promise<string[]> => {
    central.clear();
    const pdu = Buffer.from(hex, "hex");
    const l2cap = Buffer.alloc(4 + pdu.length);
    l2cap.writeUInt16LE(pdu.length, 0);
    l2cap.writeUInt16LE(cid, 2);
    pdu.copy(l2cap, 4);
    // In fragments of the controller's 27-octet LE buffer, as a host sends it (Vol 4 Part E §5.4.2).
    for (let at = 0; at < l2cap.length; at += 27) {
      central.acl(handle, at === 0 ? 0b00 : 0b01, l2cap.subarray(at, at + 27));
    }
    await clock.run({ until: clock.now() + 1000 });
    // A PDU longer than the 27-octet LE buffer comes in continuation fragments (PB 0b01).
    const pdus: Buffer[] = [];
    for (const p of central.acls()) {
      if (p.readUInt16LE(1) >> 12 === 0b01) pdus.push(Buffer.concat([pdus.pop()!, p.subarray(5)]));
      else pdus.push(p.subarray(9));
    }
    return pdus.map((p) => p.toString("hex"));
  };
  /** An ATT PDU (CID 0x0004), and what the cuff answered. */
  const att = (hex: string) => exchange(0x0004, hex);
  /** An SMP PDU (CID 0x0006), and what the cuff answered. */
  const smp = (hex: string) => exchange(0x0006, hex);
  /** An LE signaling PDU (CID 0x0005), and what the cuff answered. */
  const signal = (hex: string) => exchange(0x0005, hex);
  /** LE Enable Encryption with `key` (Rand and EDIV 0, as after legacy pairing); the events seen. */
  const encrypt = async (key: Buffer): Promise<{ status: number; enabled: number } | undefined> => {
    central.clear();
    const p = Buffer.alloc(28);
    p.writeUInt16LE(handle, 0);
    key.copy(p, 12);
    central.command(OP.LE_ENABLE_ENCRYPTION, p);
    await clock.run({ until: clock.now() + 1000 });
    const change = central.events(EVT.ENCRYPTION_CHANGE).at(-1);
    return change === undefined ? undefined : { status: change[3]!, enabled: change[6]! };
  };
  /** SMP PDUs the cuff sent since the last exchange or encrypt, as hex. */
  const smpSent = (): string[] =>
    central
      .acls()
      .filter((p) => p.readUInt16LE(7) === 0x0006)
      .map((p) => p.subarray(9).toString("hex"));
  return { att, smp, signal, encrypt, smpSent, peers, mgmtWritten };
}

/** The declaration handle and value handle of a characteristic, found by Read By Type. */
export async function declaration(
  att: (hex: string) => Promise<string[]>,
  uuid16: number,
): Promise<{ decl: number; value: number }> {
  let start = 1;
  for (;;) {
    const range = Buffer.alloc(4);
    range.writeUInt16LE(start, 0);
    range.writeUInt16LE(0xffff, 2);
    const [answer] = await att(`08${range.toString("hex")}0328`);
    const r = Buffer.from(answer!, "hex");
    if (r[0] !== 0x09) throw new Error(`no characteristic 0x${uuid16.toString(16)}`);
    const size = r[1]!;
    for (let at = 2; at + size <= r.length; at += size) {
      const decl = r.readUInt16LE(at);
      if (size === 7 && r.readUInt16LE(at + 5) === uuid16) {
        return { decl, value: r.readUInt16LE(at + 3) };
      }
      start = decl + 1;
    }
  }
}

export const le16 = (n: number) => Buffer.from([n & 0xff, n >> 8]).toString("hex");
