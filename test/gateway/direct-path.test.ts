/**
 * `--ble direct` for every gateway-connected profile: a DirectDevice (the same BleDevice that
 * bleno serves) visited through a DirectLink by the gateway's session (ble-session.ts), its
 * values assembled into readings (reading-assembler.ts) that decode with the shared codecs to
 * exactly the records taken. Reach, locks and clocks as faults.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { Profile } from "../../src/catalogue/schema.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { DirectDevice, DirectRadio } from "../../src/devices/direct-device.ts";
import type { SessionResult } from "../../src/gateway/ble-session.ts";
import { type BleHost, DirectBle } from "../../src/gateway/gateway-ble.ts";
import {
  type AssembledReading,
  macOf,
  ReadingAssembler,
} from "../../src/gateway/reading-assembler.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { readingsFor } from "../ble/support/lab.ts";

const catalogue = Catalogue.load();
const GATEWAY = catalogue.profiles.filter((p) => p.connectivity === "gateway");
const T0 = Date.UTC(2026, 4, 1, 9, 0, 0);

/** A gateway's BLE side with a fixed whitelist, collecting assembled readings and sessions. */
function rig(clock: VirtualClock, radio: DirectRadio, gatewayUuid = "A0A0A0A0A0A0") {
  const readings: AssembledReading[] = [];
  const sessions: (SessionResult | Error)[] = [];
  const sequences = new Map<string, number>();
  const assembler = new ReadingAssembler(
    catalogue,
    (r) => readings.push(r),
    () => ({ sensorCode: "0", sensorId: null }),
  );
  const host: BleHost = {
    gatewayUuid,
    admits: (address, sensorCode) => ({
      mac: macOf(address),
      sensorCode: sensorCode ?? "",
      sensorId: null,
    }),
    sessionOptions: (address, sensorCode) => ({
      clock,
      sensorCode,
      lastSequence: sequences.get(address),
      lingerMs: 0,
      onValue: (v) => assembler.add(v),
    }),
    sessionEnded: (address, outcome) => {
      assembler.end(address);
      sessions.push(outcome);
      if (!(outcome instanceof Error) && outcome.lastSequence !== undefined) {
        sequences.set(address, outcome.lastSequence);
      }
    },
  };
  return { ble: new DirectBle(radio), host, readings, sessions };
}

const deviceFor = (profile: Profile, clock: VirtualClock, radio: DirectRadio, n = 1) =>
  new DirectDevice(
    { profile, clock, serial: `SN00000${n}`, address: `C0000000000${n}`, clockOffsetMs: 0 },
    radio,
  );

describe("the direct path, every gateway-connected profile", () => {
  it("covers the catalogue's gateway profiles", () => {
    expect(GATEWAY.length).toBeGreaterThanOrEqual(12);
  });

  for (const profile of GATEWAY) {
    it(`${profile.name}: out of reach, then back, then live`, async () => {
      const clock = new VirtualClock({ startMs: T0 });
      const radio = new DirectRadio();
      const { ble, host, readings, sessions } = rig(clock, radio);
      const device = deviceFor(profile, clock, radio);
      await ble.start(host);
      const taken = readingsFor(profile, `direct/${profile.name}`, 4);
      device.setInRange(false);
      const away = [await device.take(taken[0]!), await device.take(taken[1]!)];
      expect(away).toEqual(profile.stores_offline ? ["stored", "stored"] : ["lost", "lost"]);
      device.setInRange(true);
      await ble.settled();
      for (const r of taken.slice(2)) {
        const outcome = device.take(r);
        await clock.run();
        await ble.settled();
        expect(await outcome).toBe(profile.stores_offline ? "stored" : "sent");
      }
      const delivered = profile.stores_offline ? taken : taken.slice(2);
      const mapping = mappingFor(profile);
      expect(readings.map((r) => mapping.decode(r.values, profile).records)).toEqual(
        delivered.map((r) => r.records),
      );
      expect(sessions.filter((s) => s instanceof Error)).toEqual([]);
      expect(readings.every((r) => r.deviceAddress === device.address && !r.clockUnset)).toBe(true);
      expect(device.ble.counts.lost).toBe(profile.stores_offline ? 0 : 2);
      await ble.stop();
    });
  }
});

describe("direct-path faults", () => {
  it("a device locks to its gateway and refuses another until released", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const radio = new DirectRadio();
    const profile = catalogue.get("Vendor Glucometer");
    const device = deviceFor(profile, clock, radio);
    const link = device.connect("AAAAAAAAAAAA");
    await link.disconnect();
    expect(device.lockedTo).toBe("AAAAAAAAAAAA");
    expect(() => device.connect("BBBBBBBBBBBB")).toThrow(/locked to gateway AAAAAAAAAAAA/);
    expect(device.counts.refusedConnections).toBe(1);
    device.release("AAAAAAAAAAAA");
    await device.connect("BBBBBBBBBBBB").disconnect();
    expect(device.lockedTo).toBe("BBBBBBBBBBBB");
  });

  it("leaving reach mid-visit drops the link; what was not fetched stays stored", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const radio = new DirectRadio();
    const profile = catalogue.get("Vendor Glucometer");
    const device = deviceFor(profile, clock, radio);
    const { ble, host, sessions } = rig(clock, radio);
    for (const r of readingsFor(profile, "direct/drop", 3)) await device.take(r);
    const link = device.connect(host.gatewayUuid);
    await link.discover();
    device.setInRange(false);
    await expect(link.read("2A2B")).rejects.toThrow(/the link is down/);
    expect(device.counts.linkDrops).toBe(1);
    expect(device.connected).toBe(false);
    expect(device.ble.store.size).toBe(3);
    await ble.start(host);
    device.setInRange(true);
    await ble.settled();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ stored: expect.any(Number), racp: "success" });
  });

  it("a device that cannot store sends two readings taken before the gateway's visit in it", async () => {
    // The second found the visit already queued for the first (a duplicate burst, two re-sends):
    // told no gateway would come, it lost both.
    const clock = new VirtualClock({ startMs: T0 });
    const radio = new DirectRadio();
    const profile = catalogue.get("Vendor Peak Flow Meter");
    expect(profile.stores_offline).toBe(false);
    const device = deviceFor(profile, clock, radio);
    const { ble, host, readings } = rig(clock, radio);
    await ble.start(host);
    const taken = readingsFor(profile, "direct/two", 2);
    const outcomes = [device.take(taken[0]!), device.take(taken[1]!)];
    await clock.run();
    await ble.settled();
    expect(await Promise.all(outcomes)).toEqual(["sent", "sent"]);
    expect(readings).toHaveLength(2);
    expect(device.ble.counts.lost).toBe(0);
    await ble.stop();
  });

  it("a clock found unset marks the readings kept before the visit, not the live ones", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const radio = new DirectRadio();
    const profile = catalogue.get("Vendor Glucometer");
    const device = new DirectDevice(
      { profile, clock, serial: "SN1", address: "C00000000009", clockOffsetMs: -86_400_000 },
      radio,
    );
    const { ble, host, readings, sessions } = rig(clock, radio);
    const taken = readingsFor(profile, "direct/clock", 3);
    device.setInRange(false);
    await device.take(taken[0]!);
    await device.take(taken[1]!);
    await ble.start(host);
    device.setInRange(true);
    await ble.settled();
    expect(sessions[0]).toMatchObject({ clockUnset: true, timeSet: true });
    expect((sessions[0] as SessionResult).clockErrorMs).toBeLessThan(-86_000_000);
    await device.take(taken[2]!);
    await clock.run();
    await ble.settled();
    expect(sessions[1]).toMatchObject({ clockUnset: false });
    expect(readings.map((r) => r.clockUnset)).toEqual([true, true, false]);
  });
});
