/**
 * Values a virtual device pushes (BlenoPeripheral behind the lab's checks), as a central that
 * writes raw ATT sees them: notification or indication as its CCCD asks (Vol 3 Part G §3.3.3.3).
 */
import { afterEach, describe, expect, it } from "vitest";
import { OP } from "../../src/ble/hci/constants.ts";
import { BlenoPeripheral } from "../../src/ble/hosts/peripheral.ts";
import { EmulatedRadio } from "../../src/ble/radio.ts";
import { DirectTransport } from "../../src/ble/socket/direct-transport.ts";
import { EmulatedHciSocket } from "../../src/ble/socket/emulated-socket.ts";
import { HciAdapter } from "../../src/ble/socket/hci-adapter.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { ScriptedHost } from "./support/scripted-host.ts";
import { createConnection } from "./support/two-controllers.ts";

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A peripheral with one characteristic 0xFFF1 that both notifies and indicates, connected. */
async function connectedPusher() {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
  const radio = new EmulatedRadio(clock, new Rng("peripheral-push"));
  closers.push(() => radio.close());
  const controller = radio.controller("pusher", { x: 1, y: 1 });
  const adapter = new HciAdapter(0, new DirectTransport(controller), "pusher");
  closers.push(() => adapter.close());
  const peripheral = await BlenoPeripheral.open(() => new EmulatedHciSocket(adapter), clock);
  closers.push(() => peripheral.quiesce());
  let send: ((value: Uint8Array) => Promise<void>) | undefined;
  await peripheral.serve([
    {
      uuid: "FFF0",
      characteristics: [
        { uuid: "FFF1", properties: ["notify", "indicate"], subscribe: (s) => (send = s) },
      ],
    },
  ]);
  await peripheral.advertiseData(Buffer.from("020106", "hex"), Buffer.alloc(0));
  const central = new ScriptedHost(radio.controller("central", { x: 2, y: 1 }));
  central.command(OP.LE_CREATE_CONNECTION, createConnection(controller.address));
  await clock.run({ until: clock.now() + 1000 });
  const complete = central.events(0x3e, 0x01).at(-1);
  if (complete === undefined || complete[4] !== 0) throw new Error("no connection");
  const handle = complete.readUInt16LE(5);

  /** Sends one ATT PDU (hex) and returns the ATT PDUs the peripheral sent meanwhile, as hex. */
  const att = async (hex: string): Promise<string[]> => {
    central.clear();
    const pdu = Buffer.from(hex, "hex");
    const l2cap = Buffer.concat([Buffer.from([pdu.length, 0, 0x04, 0]), pdu]);
    central.acl(handle, 0b00, l2cap);
    await clock.run({ until: clock.now() + 1000 });
    return central.acls().map((p) => p.subarray(9).toString("hex"));
  };
  /**
   * Pushes a value; returns the ATT PDUs sent for it, whether the push has settled, and how:
   * "sent" or its error's message.
   */
  const push = async (value: string) => {
    central.clear();
    let outcome: string | undefined;
    send!(Buffer.from(value, "hex")).then(
      () => (outcome = "sent"),
      (error: Error) => (outcome = error.message),
    );
    await clock.run({ until: clock.now() + 1000 });
    return {
      pdus: central.acls().map((p) => p.subarray(9).toString("hex")),
      settled: () => outcome !== undefined,
      outcome: () => outcome,
    };
  };
  return { att, push, clock, central };
}

/** The value handle of 0xFFF1, by Read By Type of characteristic declarations. */
async function valueHandle(att: (hex: string) => Promise<string[]>): Promise<number> {
  for (let start = 1; ; ) {
    const r = Buffer.from((await att(`08${h(start)}ffff0328`))[0]!, "hex");
    if (r[0] !== 0x09) throw new Error("no characteristic FFF1");
    for (let at = 2; at + 7 <= r.length; at += 7) {
      if (r.readUInt16LE(at + 5) === 0xfff1) return r.readUInt16LE(at + 3);
      start = r.readUInt16LE(at) + 1;
    }
  }
}

const h = (n: number) => Buffer.from([n & 0xff, n >> 8]).toString("hex");

describe("a virtual device's pushed values, to raw ATT", () => {
  it("indicates to a central whose CCCD enables Indication alone, on a characteristic that has both", async () => {
    const { att, push, clock } = await connectedPusher();
    const value = await valueHandle(att);

    // Indication alone (0x0002): bleno notified (0x1B) all the same.
    expect(await att(`12${h(value + 1)}0200`)).toEqual(["13"]);
    const indicated = await push("2a");
    expect(indicated.pdus).toEqual([`1d${h(value)}2a`]);
    expect(indicated.settled()).toBe(false);
    // Settled by the Handle Value Confirmation.
    await att("1e");
    await clock.run({ until: clock.now() + 100 });
    expect(indicated.settled()).toBe(true);

    // Notification (0x0001), or both bits (the server's choice): notified.
    expect(await att(`12${h(value + 1)}0100`)).toEqual(["13"]);
    const notified = await push("2b");
    expect(notified.pdus).toEqual([`1b${h(value)}2b`]);
    expect(notified.settled()).toBe(true);
  });

  it("sends nothing queued for a characteristic once the central turns its CCCD off", async () => {
    const { att, push, clock, central } = await connectedPusher();
    const value = await valueHandle(att);
    expect(await att(`12${h(value + 1)}0200`)).toEqual(["13"]);
    const first = await push("01");
    expect(first.pdus).toEqual([`1d${h(value)}01`]);
    // Queued behind the unconfirmed indication.
    const second = await push("02");
    expect(second.pdus).toEqual([]);
    expect(await att(`12${h(value + 1)}0000`)).toEqual(["13"]);
    // The confirmation frees the bearer: bleno sent the queued value to a central that had
    // turned them off (Vol 3 Part G §3.3.3.3).
    central.clear();
    await att("1e");
    await clock.run({ until: clock.now() + 1000 });
    expect(central.acls()).toEqual([]);
    expect(first.outcome()).toBe("sent");
    expect(second.outcome()).toBe("not sent: the central turned FFF1's CCCD off");
  });

  it("sizes a pushed value by the ATT_MTU when it is sent, not by the one at the subscribe", async () => {
    const { att, push } = await connectedPusher();
    const value = await valueHandle(att);
    // Subscribed at ATT_MTU 23, then exchanged to 256: a 30-octet value fits (ATT_MTU − 3 =
    // 253, Vol 3 Part F §3.4.7.1), where the lab refused it by the 20 of the subscribe.
    expect(await att(`12${h(value + 1)}0100`)).toEqual(["13"]);
    expect(await att("020001")).toEqual(["030001"]);
    const long = await push("5a".repeat(30));
    expect(long.outcome()).toBe("sent");
    expect(long.pdus[0]!.startsWith(`1b${h(value)}5a5a`)).toBe(true);
    // A second exchange lowers it to 30 (27 octets a value): bleno cut a 28-octet value without
    // a word, where the subscribe's 253 let it through.
    expect(await att("021e00")).toEqual(["030001"]);
    const cut = await push("5b".repeat(28));
    expect(cut.outcome()).toBe("FFF1: a 28-octet value exceeds ATT_MTU − 3 = 27");
    expect(cut.pdus).toEqual([]);
  });
});
