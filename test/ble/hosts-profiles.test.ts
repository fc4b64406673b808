/**
 * Every gateway-connected profile of the catalogue, as a bleno peripheral in a worker, visited
 * twice by the noble gateway on virtual controllers: advertise, discover, connect, discover GATT,
 * set time, subscribe, stored records (RACP where the profile has it, the BLS/WSS stored
 * measurement flush otherwise), a live reading, disconnect; then reconnect and fetch only what
 * is new (RACP "sequence ≥ n").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Profile } from "../../src/catalogue/schema.ts";
import type { GatewayHost } from "../../src/gateway/gateway-host.ts";
import type { RawCharacteristicValue } from "../../src/gateway/raw-values.ts";
import { type CharacteristicValue, mappingFor } from "../../src/gatt/mapping.ts";
import type { PhysicalReading } from "../../src/readings/types.ts";
import { catalogue, HostLab, readingsFor, within } from "./support/lab.ts";

const profiles = catalogue.profiles.filter((p) => p.connectivity === "gateway");
let lab: HostLab;
let gateway: GatewayHost;

beforeAll(async () => {
  lab = new HostLab();
  gateway = await lab.gateway();
});
afterAll(async () => {
  await lab.close();
});

/** Splits received values into readings the way the mapping encodes them, and decodes each. */
function decodeAll(
  profile: Profile,
  expected: readonly PhysicalReading[],
  got: readonly RawCharacteristicValue[],
) {
  const mapping = mappingFor(profile);
  let at = 0;
  return expected.map((reading) => {
    const n = mapping.encode(reading, profile, 1).length;
    const values: CharacteristicValue[] = got
      .slice(at, at + n)
      .map((v) => ({ uuid: v.uuid, value: v.value }));
    at += n;
    return mapping.decode(values, profile).records;
  });
}

describe("every gateway-connected profile over unmodified noble and bleno", () => {
  it("covers the catalogue's gateway profiles", () => {
    expect(profiles.length).toBeGreaterThanOrEqual(12);
  });

  for (const [i, profile] of profiles.entries()) {
    it(`${profile.name}`, async () => {
      const device = await lab.device({
        profile: profile.name,
        serial: `SN${String(i).padStart(6, "0")}`,
        clockOffsetMs: 90_000,
      });
      try {
        const racp = profile.gatt.characteristics.some((c) => c.role === "racp");
        const readings = readingsFor(profile, `profiles/${profile.name}`, 4);
        const [offline1, offline2, live, later] = readings as [
          PhysicalReading,
          PhysicalReading,
          PhysicalReading,
          PhysicalReading,
        ];
        const whitelist = [{ address: device.address, sensorCode: profile.sensor_code! }];
        const outcomes = [await device.measure(offline1), await device.measure(offline2)];
        expect(outcomes).toEqual(profile.stores_offline ? ["stored", "stored"] : ["lost", "lost"]);

        lab.values.length = 0;
        const listening = within(20_000, "subscriptions", (done) =>
          device.events.on("listening", () => done(undefined)),
        );
        const first = gateway.visit({
          whitelist,
          lastSequences: {},
          lingerMs: 1000,
          scanTimeoutMs: 15_000,
        });
        await listening;
        if (racp) {
          // The live reading after the stored ones, so the test knows the order to decode in.
          const storedValues = [offline1, offline2].reduce(
            (n, r) => n + mappingFor(profile).encode(r, profile, 1).length,
            0,
          );
          await lab.valuesReceived(
            storedValues,
            (v) => v.deviceAddress === device.address && v.stored,
          );
        }
        expect(await device.measure(live)).toBe("sent");
        const v1 = await first;
        expect(v1.address).toBe(device.address);
        expect(v1.result.timeSet).toBe(true);
        expect(v1.result.mtu).toBeGreaterThanOrEqual(39); // inhaler records are up to 36 octets
        expect(v1.result.services).toEqual(
          expect.arrayContaining([
            profile.gatt.service.toUpperCase().length === 4
              ? profile.gatt.service
              : profile.gatt.service,
            "180A",
          ]),
        );
        const sent = profile.stores_offline ? [offline1, offline2, live] : [live];
        const got1 = lab.values.filter((v) => v.deviceAddress === device.address);
        expect(decodeAll(profile, sent, got1)).toEqual(sent.map((r) => r.records));
        expect(v1.result.racp).toBe(racp ? "success" : "none");
        if (racp) expect(got1.filter((v) => v.stored).length).toBeGreaterThan(0);
        const status = await device.status();
        expect(Math.abs(status.clockError)).toBeLessThan(5_000); // 90 s off until the gateway set it

        // Reconnect: one reading taken meanwhile; RACP asks only for sequences after the last held.
        expect(await device.measure(later)).toBe(profile.stores_offline ? "stored" : "lost");
        lab.values.length = 0;
        const last = v1.result.lastSequence;
        const second = await gateway.visit({
          whitelist,
          lastSequences: last === undefined ? {} : { [device.address]: last },
          // Without RACP the device flushes its stored measurements on subscription: stay for them.
          lingerMs: racp ? 0 : 1000,
          scanTimeoutMs: 15_000,
        });
        const got2 = lab.values.filter((v) => v.deviceAddress === device.address);
        if (profile.stores_offline)
          expect(decodeAll(profile, [later], got2)).toEqual([later.records]);
        else expect(got2.filter((v) => v.stored)).toEqual([]);
        if (racp) expect(second.result.racp).toBe("success");
      } finally {
        await device.close();
      }
    });
  }
});
