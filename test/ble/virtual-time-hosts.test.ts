/**
 * Issue 7 §1 (emulated BLE in scenarios) rests on this: the unmodified noble and bleno hosts, in
 * this process on virtual controllers, follow a VirtualClock. Packets reach the hosts as
 * microtasks (EmulatedHciSocket) and VirtualClock.run() lets them settle after every event, so
 * a visit completes in a few virtual seconds and no session or supervision timer fires early;
 * silent hosts leave nothing on the clock, so idle days cost nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { NobleBle } from "../../src/app/ble-gateway.ts";
import { NobleCentral } from "../../src/ble/hosts/central.ts";
import { BlenoPeripheral } from "../../src/ble/hosts/peripheral.ts";
import { EmulatedRadio } from "../../src/ble/radio.ts";
import { DirectTransport } from "../../src/ble/socket/direct-transport.ts";
import { EmulatedHciSocket } from "../../src/ble/socket/emulated-socket.ts";
import { HciAdapter } from "../../src/ble/socket/hci-adapter.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { advertisingData, scanResponseData } from "../../src/devices/advertising-data.ts";
import { BleDevice } from "../../src/devices/ble-device.ts";
import type { SessionResult } from "../../src/gateway/ble-session.ts";
import type { BleHost } from "../../src/gateway/gateway-ble.ts";
import type { RawCharacteristicValue } from "../../src/gateway/raw-values.ts";
import {
  currentTimeAt,
  decodeCurrentTime,
  encodeCurrentTime,
} from "../../src/gatt/characteristics/current-time.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { catalogue, readingsFor } from "./support/lab.ts";

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("noble and bleno in process on a VirtualClock", () => {
  it("a gateway visits a cuff and fetches its stored reading in virtual time", async () => {
    const profile = catalogue.get("Vendor BPM - S");
    const start = Date.UTC(2026, 0, 5, 8);
    const clock = new VirtualClock({ startMs: start });
    const radio = new EmulatedRadio(clock, new Rng("virtual-hosts"));
    closers.push(() => radio.close());
    const adapter = new HciAdapter(
      0,
      new DirectTransport(radio.controller("cuff", { x: 1, y: 1 })),
      "cuff",
    );
    closers.push(() => adapter.close());
    const device = new BleDevice({ profile, clock, serial: "BPM0001", clockOffsetMs: -90_000 });
    const peripheral = await BlenoPeripheral.open(() => new EmulatedHciSocket(adapter), clock);
    closers.push(() => peripheral.quiesce());
    await peripheral.serve(device.services());
    const [stored] = readingsFor(profile, "virtual-hosts", 1) as [never];
    expect(await device.measure(stored)).toBe("stored");

    const values: RawCharacteristicValue[] = [];
    const ended: { at: number; outcome: SessionResult | Error }[] = [];
    const host: BleHost = {
      gatewayUuid: "E0E1E2E3E4E5",
      admits: (address, code) =>
        code === "10" ? { mac: address, sensorCode: "10", sensorId: null } : undefined,
      sessionOptions: (_address, sensorCode) => ({
        clock,
        sensorCode,
        lastSequence: undefined,
        lingerMs: 2000,
        onValue: (v) => values.push(v),
      }),
      sessionEnded: (_address, outcome) => {
        ended.push({ at: clock.now(), outcome });
        // The cuff has nothing more to send: it goes quiet, as a real one does.
        void peripheral.stopAdvertising();
      },
    };
    const ble = new NobleBle({ kind: "emulated" }, clock, new Rng("noble"), { radio });
    closers.push(() => ble.stop());
    await ble.start(host);
    peripheral.on("disconnect", () => device.disconnected());
    await peripheral.advertiseData(
      advertisingData(profile),
      scanResponseData(device.localName, profile.sensor_code),
    );

    // No `until`: the run ends when nothing is left on the clock.
    await clock.run();

    expect(ended).toHaveLength(1);
    const [visit] = ended;
    expect(visit!.outcome).toMatchObject({ timeSet: true, clockUnset: false, live: 3 });
    // Advertising, connection, discovery, time, subscriptions and the 2 s linger: seconds.
    expect(visit!.at - start).toBeGreaterThan(2000);
    expect(visit!.at - start).toBeLessThan(10_000);
    const decoded = mappingFor(profile).decode(
      values.map((v) => ({ uuid: v.uuid, value: v.value })),
      profile,
    );
    expect(decoded.records).toEqual((stored as { records: unknown }).records);
    expect(device.store.size).toBe(0);
    // Silent cuff, scanning gateway: nothing waits on the clock.
    expect(clock.pending).toBe(0);
  }, 30_000);

  it("a connection the peripheral never answers is given up on the clock, and the central connects later", async () => {
    const profile = catalogue.get("Vendor BPM - S");
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
    const radio = new EmulatedRadio(clock, new Rng("connect-timeout"));
    closers.push(() => radio.close());
    const sockets = (name: string, x: number) => {
      const controller = radio.controller(name, { x, y: 0 });
      const adapter = new HciAdapter(0, new DirectTransport(controller), name);
      closers.push(() => adapter.close());
      return { controller, factory: () => new EmulatedHciSocket(adapter) };
    };
    const cuff = sockets("cuff", 2);
    const device = new BleDevice({ profile, clock, serial: "BPM0002" });
    const peripheral = await BlenoPeripheral.open(cuff.factory, clock);
    closers.push(() => peripheral.quiesce());
    await peripheral.serve(device.services());
    const central = await NobleCentral.open(sockets("hub", 0).factory, clock);
    closers.push(() => central.quiesce());
    await peripheral.advertiseData(
      advertisingData(profile),
      scanResponseData(device.localName, profile.sensor_code),
    );
    let seen: string | undefined;
    const stop = await central.startScan([], (adv) => {
      seen ??= adv.id;
    });
    await clock.run({ until: clock.now() + 2000 });
    await stop();
    expect(seen).toBeDefined();

    // The cuff walks away before the hub connects: its advertising no longer reaches the hub.
    radio.medium.move(cuff.controller, { x: 500, y: 0 });
    const attempt = central.connect(seen!, { clock, ms: 10_000 });
    attempt.catch(() => undefined);
    await clock.run({ until: clock.now() + 11_000 });
    await expect(attempt).rejects.toThrow(/no connection within 10000 ms/);

    radio.medium.move(cuff.controller, { x: 2, y: 0 });
    const again = central.connect(seen!, { clock, ms: 10_000 });
    await clock.run({ until: clock.now() + 2000 });
    const link = await again;
    expect(link.connected).toBe(true);
    const closed = link.disconnect();
    await clock.run({ until: clock.now() + 1000 });
    await closed;
    expect(link.connected).toBe(false);
  }, 30_000);

  it("a cuff serves Current Time with a CCCD and notifies the time a central sets (CTS 1.1 §3.1)", async () => {
    const profile = catalogue.get("Vendor BPM - S");
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
    const radio = new EmulatedRadio(clock, new Rng("cts-notify"));
    closers.push(() => radio.close());
    const sockets = (name: string, x: number) => {
      const adapter = new HciAdapter(
        0,
        new DirectTransport(radio.controller(name, { x, y: 0 })),
        name,
      );
      closers.push(() => adapter.close());
      return () => new EmulatedHciSocket(adapter);
    };
    const device = new BleDevice({ profile, clock, serial: "BPM0003", clockOffsetMs: 600_000 });
    const peripheral = await BlenoPeripheral.open(sockets("cuff", 1), clock);
    closers.push(() => peripheral.quiesce());
    await peripheral.serve(device.services());
    await peripheral.advertiseData(
      advertisingData(profile),
      scanResponseData(device.localName, profile.sensor_code),
    );
    const central = await NobleCentral.open(sockets("hub", 0), clock);
    closers.push(() => central.quiesce());
    let seen: string | undefined;
    const stop = await central.startScan([], (adv) => {
      seen ??= adv.id;
    });
    await clock.run({ until: clock.now() + 2000 });
    await stop();
    const connecting = central.connect(seen!);
    await clock.run({ until: clock.now() + 2000 });
    const link = await connecting;
    closers.push(async () => {
      const closed = link.disconnect();
      await clock.run({ until: clock.now() + 1000 });
      await closed;
    });
    const settle = async <T>(p: Promise<T>): Promise<T> => {
      await clock.run({ until: clock.now() + 2000 });
      return await p;
    };
    await settle(link.discover());
    expect(link.canSubscribe("2A2B")).toBe(true);

    // The subscribe finds the CCCD (a characteristic without one fails it, naming it).
    const notified: Buffer[] = [];
    await settle(link.subscribe("2A2B", (v) => notified.push(v)));
    const set = encodeCurrentTime(currentTimeAt(clock.now()));
    await settle(link.write("2A2B", set));
    expect(notified).toHaveLength(1);
    const ct = decodeCurrentTime(notified[0]!);
    expect(ct.dateTime).toEqual(decodeCurrentTime(set).dateTime);
    expect(ct.adjustReason.manualTimeUpdate).toBe(true);
    expect(Math.abs(device.clock.error())).toBeLessThan(1000);
  }, 30_000);
});
