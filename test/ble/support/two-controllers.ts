import { VirtualController } from "../../../src/ble/controller/virtual-controller.ts";
import { OP } from "../../../src/ble/hci/constants.ts";
import { RadioMedium } from "../../../src/ble/medium/radio-medium.ts";
import { Rng } from "../../../src/core/rng.ts";
import { VirtualClock } from "../../../src/core/virtual-clock.ts";
import { ScriptedHost } from "./scripted-host.ts";

export const CENTRAL = "c0:00:00:00:00:01";
export const PERIPHERAL = "c0:00:00:00:00:02";

/** Two controllers on one medium on virtual time, each with a scripted host. */
export function twoControllers(seed = "ble-test") {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const rng = new Rng(seed);
  const medium = new RadioMedium({ clock, rng: rng.fork("medium") });
  const central = new VirtualController({
    name: "central",
    address: CENTRAL,
    medium,
    rng: rng.fork("c"),
  });
  const peripheral = new VirtualController({
    name: "peripheral",
    address: PERIPHERAL,
    medium,
    rng: rng.fork("p"),
  });
  return {
    clock,
    medium,
    central,
    peripheral,
    c: new ScriptedHost(central),
    p: new ScriptedHost(peripheral),
  };
}

/** LE Set Advertising Parameters: ADV_IND every `intervalMs`. */
export function advParams(intervalMs = 100, type = 0): Buffer {
  const p = Buffer.alloc(15);
  const units = Math.round(intervalMs / 0.625);
  p.writeUInt16LE(units, 0);
  p.writeUInt16LE(units, 2);
  p[4] = type;
  p[13] = 0x07;
  return p;
}

/** Advertising or scan response data parameter: length then 31 octets. */
export function dataParam(data: Uint8Array): Buffer {
  const p = Buffer.alloc(32);
  p[0] = data.length;
  p.set(data, 1);
  return p;
}

export function createConnection(
  peer: string,
  min = 6,
  max = 12,
  latency = 0,
  timeout = 100,
): Buffer {
  const p = Buffer.alloc(25);
  p.writeUInt16LE(0x60, 0);
  p.writeUInt16LE(0x30, 2);
  p[5] = 0;
  Buffer.from(peer.split(":").reverse().join(""), "hex").copy(p, 6);
  p.writeUInt16LE(min, 13);
  p.writeUInt16LE(max, 15);
  p.writeUInt16LE(latency, 17);
  p.writeUInt16LE(timeout, 19);
  return p;
}

/** Peripheral advertising, central connected; returns both handles. */
export function connect(t: ReturnType<typeof twoControllers>): { ch: number; ph: number } {
  t.p.command(OP.LE_SET_ADVERTISING_PARAMETERS, advParams(50));
  t.p.command(OP.LE_SET_ADVERTISING_ENABLE, Buffer.from([1]));
  t.c.command(OP.LE_CREATE_CONNECTION, createConnection(PERIPHERAL));
  t.clock.runSync({ until: t.clock.now() + 200 });
  const cc = t.c.events(0x3e, 0x01).at(-1);
  const pc = t.p.events(0x3e, 0x01).at(-1);
  if (cc === undefined || pc === undefined) throw new Error("no connection");
  return { ch: cc.readUInt16LE(5), ph: pc.readUInt16LE(5) };
}
