/**
 * EmulatedDevice (issue 7 §1): a BleDevice on an in-process bleno, on a virtual clock. It
 * advertises only while it has something for a gateway, in rounds that grow apart while no
 * gateway answers, loses a reading it cannot store when no gateway comes, and, out of range,
 * stands beyond the medium's range limit until it comes back and is visited.
 */
import { afterEach, describe, expect, it } from "vitest";
import { NobleBle } from "../../src/app/ble-gateway.ts";
import { OP } from "../../src/ble/hci/constants.ts";
import { EmulatedRadio } from "../../src/ble/radio.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { EmulatedDevice } from "../../src/devices/emulated-device.ts";
import type { BleHost } from "../../src/gateway/gateway-ble.ts";
import type { RawCharacteristicValue } from "../../src/gateway/raw-values.ts";
import { catalogue, readingsFor } from "../ble/support/lab.ts";

const START = Date.UTC(2026, 0, 5, 8);
const HOUR = 3_600_000;
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function rig(profileName: string) {
  const clock = new VirtualClock({ startMs: START });
  const radio = new EmulatedRadio(clock, new Rng("emulated-device"));
  closers.push(() => radio.close());
  const profile = catalogue.get(profileName);
  const device = await EmulatedDevice.open({
    profile,
    clock,
    serial: "DEV00001",
    address: "C01122334455",
    radio,
    home: { x: 2, y: 1 },
    away: { x: 150, y: 0 },
  });
  closers.push(() => device.close());
  /** Virtual times at which the device's host switched advertising on. */
  const rounds: number[] = [];
  device.station.tap((direction, packet) => {
    const enable = direction === "host-to-controller" && packet[0] === 0x01;
    if (enable && packet.readUInt16LE(1) === OP.LE_SET_ADVERTISING_ENABLE && packet[4] === 1)
      rounds.push(clock.now());
  });
  return { clock, radio, device, profile, rounds };
}

/** A noble gateway two metres from the device, visiting whatever it admits without a pause. */
async function gatewayNextTo(radio: EmulatedRadio, host: BleHost): Promise<void> {
  const gateway = new NobleBle({ kind: "emulated" }, radio.clock, new Rng("gw"), {
    radio,
    position: { x: 0, y: 0 },
    revisitMs: 0,
  });
  closers.push(() => gateway.stop());
  await gateway.start(host);
}

describe("EmulatedDevice", () => {
  it("advertises in rounds further and further apart while no gateway comes", async () => {
    const { clock, device, profile, rounds } = await rig("Vendor BPM - S");
    const [reading] = readingsFor(profile, "emulated-device", 1);
    expect(await device.take(reading!)).toBe("stored");
    await clock.run({ until: START + 24 * HOUR });
    expect(device.wantsGateway).toBe(true);
    const gaps = rounds.slice(1).map((t, i) => t - rounds[i]!);
    // 30 s rounds, then 1, 2, 4 … minutes apart, at most an hour: about 30 rounds a day.
    expect(gaps[0]).toBe(30_000 + 60_000);
    expect(gaps.every((g, i) => i === 0 || g >= gaps[i - 1]!)).toBe(true);
    expect(Math.max(...gaps)).toBe(30_000 + HOUR);
    expect(rounds.length).toBeGreaterThan(20);
    expect(rounds.length).toBeLessThan(35);
  }, 30_000);

  it("loses a reading it cannot store when no gateway connects within a round, then goes quiet", async () => {
    const { clock, device, profile, rounds } = await rig("Vendor Bariatric Scale");
    const [reading] = readingsFor(profile, "emulated-scale", 1);
    const outcome = device.take(reading!);
    await clock.run({ until: START + HOUR });
    expect(await outcome).toBe("lost");
    expect(rounds).toHaveLength(1);
    expect(device.wantsGateway).toBe(false);
    expect(clock.pending).toBe(0);
  }, 30_000);

  it("a device its gateway cannot empty is visited again on the back-off, not in a loop", async () => {
    const { clock, radio, device, profile } = await rig("Vendor BPM - S");
    const visits: number[] = [];
    const host: BleHost = {
      gatewayUuid: "E0E1E2E3E4E5",
      admits: (address) => ({ mac: address, sensorCode: "10", sensorId: null }),
      sessionOptions: () => {
        throw new Error("this gateway's session fails at once");
      },
      sessionEnded: () => visits.push(clock.now()),
    };
    await gatewayNextTo(radio, host);
    const [reading] = readingsFor(profile, "emulated-loop", 1);
    expect(await device.take(reading!)).toBe("stored");
    await clock.run({ until: START + 2 * HOUR });
    // The gateway ends each failed visit; the cuff comes back after 1, 2, 4 … 64 minutes.
    expect(visits.length).toBeGreaterThanOrEqual(6);
    expect(visits.length).toBeLessThanOrEqual(9);
    expect(visits[2]! - visits[1]!).toBeGreaterThan(2 * 60_000);
    expect(device.wantsGateway).toBe(true);
  }, 30_000);

  it("out of range it keeps its readings; back in range its gateway fetches them", async () => {
    const { clock, radio, device, profile } = await rig("Vendor BPM - S");
    const values: RawCharacteristicValue[] = [];
    const host: BleHost = {
      gatewayUuid: "E0E1E2E3E4E5",
      admits: (address, code) =>
        code === "10" ? { mac: address, sensorCode: "10", sensorId: null } : undefined,
      sessionOptions: (_address, sensorCode) => ({
        clock,
        sensorCode,
        lastSequence: undefined,
        onValue: (v) => values.push(v),
      }),
      sessionEnded: () => undefined,
    };
    await gatewayNextTo(radio, host);
    device.setInRange(false);
    const readings = readingsFor(profile, "emulated-away", 2);
    for (const r of readings) expect(await device.take(r)).toBe("stored");
    await clock.run({ until: START + 3 * HOUR });
    expect(values).toHaveLength(0);
    device.setInRange(true);
    await clock.run({ until: START + 4 * HOUR });
    expect(values.map((v) => v.uuid).filter((u) => u === "2A35")).toHaveLength(2);
    expect(device.wantsGateway).toBe(false);
    // Everything sent: the cuff is quiet, the gateway scans, nothing waits on the clock.
    expect(clock.pending).toBe(0);
  }, 30_000);
});
