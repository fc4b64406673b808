/**
 * Unmodified noble (the gateway) and bleno (a blood pressure cuff), each in a worker thread,
 * over virtual controllers: advertise, scan, connect, discover, set time, subscribe, stored and
 * live readings, disconnect.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { catalogue, HostLab, readingsFor, within } from "./support/lab.ts";

const profile = catalogue.get("Vendor BPM - S");
let lab: HostLab;

afterEach(async () => {
  await lab.close();
});

describe("blood pressure cuff (bleno) and gateway (noble) on the emulated path", () => {
  it("stores a reading out of range, sends it on connection, then a live one, and disconnects", async () => {
    lab = new HostLab();
    const device = await lab.device({
      profile: profile.name,
      serial: "BPM0001",
      clockOffsetMs: -3_600_000,
    });
    const gateway = await lab.gateway();
    const [stored, live] = readingsFor(profile, "bp-host", 2) as [never, never];
    expect(await device.measure(stored)).toBe("stored");

    const listening = within(20_000, "subscriptions", (done) =>
      device.events.on("listening", () => done(undefined)),
    );
    const visit = gateway.visit({
      whitelist: [{ sensorCode: "10" }],
      lastSequences: {},
      lingerMs: 1500,
      scanTimeoutMs: 10_000,
    });
    await listening;
    expect(await device.measure(live)).toBe("sent");
    const { result, address } = await visit;

    expect(address).toBe(device.address);
    expect(result.services).toEqual(expect.arrayContaining(["1810", "180F", "1805", "180A"]));
    expect(result.timeSet).toBe(true);
    const status = await device.status();
    expect(status.counts.timeWrites).toBe(1);
    expect(Math.abs(status.clockError)).toBeLessThan(5_000); // was an hour off until set
    expect(status.stored).toBe(0);

    // Two readings, each a 2A35 indication with its Battery Level and Reading Context.
    const mapping = mappingFor(profile);
    const bySequence = new Map<number, typeof lab.values>();
    let current: typeof lab.values = [];
    for (const v of lab.values) {
      current.push(v);
      if (v.uuid === "7e3a0003-8c4d-4f6b-9a21-5d2c1b0e4f60") {
        bySequence.set(v.sequence!, current);
        current = [];
      }
    }
    expect(bySequence.size).toBe(2);
    const decoded = [...bySequence.values()].map((vs) => mapping.decode(vs, profile));
    expect(decoded.map((r) => r.records)).toEqual(
      [stored, live].map((r: { records: unknown }) => r.records),
    );
    const disconnected = await device.status();
    expect(disconnected.connected).toBe(false);
  });
});
