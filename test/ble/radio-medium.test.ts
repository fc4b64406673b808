import { describe, expect, it } from "vitest";
import { VirtualController } from "../../src/ble/controller/virtual-controller.ts";
import { EVT, LE_EVT, OP, STATUS } from "../../src/ble/hci/constants.ts";
import {
  lossProbability,
  DEFAULT_PROPAGATION as P,
  rssiAt,
} from "../../src/ble/medium/path-loss.ts";
import { Rng } from "../../src/core/rng.ts";
import {
  advParams,
  CENTRAL,
  connect,
  dataParam,
  PERIPHERAL,
  twoControllers,
} from "./support/two-controllers.ts";

/** Advertising reports a scanner at `metres` hears in `seconds` of 20 ms advertising. */
function heard(metres: number, seed: string, seconds = 10): number {
  const t = twoControllers(seed);
  t.medium.move(t.peripheral, { x: metres, y: 0 });
  t.p.command(OP.LE_SET_ADVERTISING_PARAMETERS, advParams(20, 0x03));
  t.p.command(OP.LE_SET_ADVERTISING_DATA, dataParam(Buffer.from([2, 1, 6])));
  t.p.command(OP.LE_SET_ADVERTISING_ENABLE, Buffer.from([1]));
  t.c.command(OP.LE_SET_SCAN_ENABLE, Buffer.from([1, 0]));
  t.clock.runSync({ until: t.clock.now() + seconds * 1000 });
  return t.c.events(EVT.LE_META, LE_EVT.ADVERTISING_REPORT).length;
}

describe("RadioMedium", () => {
  it("follows log-distance path loss and loses more as RSSI nears the sensitivity", () => {
    expect(rssiAt(P, 1)).toBe(-40);
    expect(rssiAt(P, 10)).toBe(-62);
    expect(lossProbability(P, -60, 0)).toBeLessThan(0.01);
    expect(lossProbability(P, -93, 0)).toBeGreaterThan(0.5);
    expect(lossProbability(P, -96, 0)).toBe(1);
    expect(lossProbability(P, -60, 0.5)).toBeGreaterThan(0.5);
  });

  it("packet loss is seeded: the same seed hears the same events, and far away hears fewer", () => {
    const near = heard(2, "loss");
    const far = heard(29, "loss");
    expect(heard(29, "loss")).toBe(far);
    expect(near).toBeGreaterThan(350);
    expect(far).toBeLessThan(near);
    expect(far).toBeGreaterThan(0);
  });

  it("a partition is a fault: the link ends by supervision timeout (0x08); healing in time keeps it", () => {
    const t = twoControllers();
    connect(t);
    t.medium.partition([[CENTRAL], [PERIPHERAL]]);
    t.clock.runSync({ until: t.clock.now() + 500 });
    t.medium.heal();
    t.clock.runSync({ until: t.clock.now() + 2000 });
    expect(t.c.events(EVT.DISCONNECTION_COMPLETE)).toHaveLength(0);
    t.medium.partition([[CENTRAL], [PERIPHERAL]]);
    t.clock.runSync({ until: t.clock.now() + 1100 });
    expect(t.c.events(EVT.DISCONNECTION_COMPLETE).at(-1)![6]).toBe(STATUS.CONNECTION_TIMEOUT);
    expect(t.p.events(EVT.DISCONNECTION_COMPLETE).at(-1)![6]).toBe(STATUS.CONNECTION_TIMEOUT);
  });

  it("interference delays data (retransmissions at connection events) but loses none", () => {
    const t = twoControllers("interference");
    const { ch } = connect(t);
    t.medium.setInterference(0.6);
    const pdu = Buffer.from([3, 0, 4, 0, 1, 2, 3]);
    for (let i = 0; i < 8; i++) t.c.acl(ch, 0b00, pdu); // all 8 buffers
    t.clock.runSync({ until: t.clock.now() + 5 });
    const early = t.p.acls().length;
    t.clock.runSync({ until: t.clock.now() + 900 });
    expect(early).toBeLessThan(8);
    expect(t.p.acls()).toHaveLength(8);
    expect(() => t.medium.setInterference(2)).toThrow(/interference/);
  });

  it("interference around some stations touches only their PDUs, and ends when set to 0", () => {
    /** Advertising reports heard in 10 s of 20 ms advertising, with `level` around `who`. */
    const heardWith = (who: "peripheral" | "elsewhere", level: number): number => {
      const t = twoControllers("local-interference");
      const other = new VirtualController({
        name: "elsewhere",
        address: "c0:00:00:00:00:09",
        medium: t.medium,
        rng: new Rng("elsewhere"),
      });
      t.medium.move(t.peripheral, { x: 2, y: 0 });
      t.medium.setInterferenceAround([who === "peripheral" ? t.peripheral : other], level);
      t.p.command(OP.LE_SET_ADVERTISING_PARAMETERS, advParams(20, 0x03));
      t.p.command(OP.LE_SET_ADVERTISING_DATA, dataParam(Buffer.from([2, 1, 6])));
      t.p.command(OP.LE_SET_ADVERTISING_ENABLE, Buffer.from([1]));
      t.c.command(OP.LE_SET_SCAN_ENABLE, Buffer.from([1, 0]));
      t.clock.runSync({ until: t.clock.now() + 10_000 });
      return t.c.events(EVT.LE_META, LE_EVT.ADVERTISING_REPORT).length;
    };
    const clear = heardWith("peripheral", 0);
    expect(heardWith("elsewhere", 0.8)).toBe(clear);
    const noisy = heardWith("peripheral", 0.8);
    expect(noisy).toBeLessThan(clear * 0.35);
    expect(noisy).toBeGreaterThan(0);
    expect(() => twoControllers().medium.setInterferenceAround([], -1)).toThrow(/interference/);
  });
});
