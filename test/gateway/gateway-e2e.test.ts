/**
 * Issue 6 §1 and §3, end to end: `rpmlab serve` in process (store, embedded broker with the
 * lab's credentials, ingestion, downlinks, HTTP API) on a virtual Clock; devices of several
 * profiles activated on a gateway through the HWI API; the simulated gateway with `--ble direct`
 * devices against it. The whitelist goes RE → CO, every reading a device did not lose by design
 * is read back from the API exactly once — through an outage and a gateway restart with a
 * non-empty outbox on disk — signal and check-in time move as spec 2.2/2.3 say, and a device
 * whose clock was never set gets estimated timestamps at the gateway's receive time.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { Rng } from "../../src/core/rng.ts";
import { toIsoMicros } from "../../src/core/time.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { MeasureOutcome } from "../../src/devices/ble-device.ts";
import { DirectDevice, DirectRadio } from "../../src/devices/direct-device.ts";
import { deviceMacAddress } from "../../src/fulfilment/identifiers.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { recordKey } from "../../src/scenario/run/ledger.ts";
import { ServeLab } from "./serve-lab.ts";

const catalogue = Catalogue.load();
const patients = PatientModels.load();
const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2026, 2, 2, 8, 0, 0);
const GW = "A1B2C3D4E5F6";
const YEARS_20 = 20 * 365 * 24 * HOUR;

interface FleetEntry {
  readonly name: string;
  readonly patient: string;
  readonly sensorId?: string;
  /** Out of reach until this instant, with a clock that was never set. */
  readonly unsetUntil?: number;
}

const FLEET: readonly FleetEntry[] = [
  { name: "Vendor BPM - Wide Range", patient: "P-BPM" },
  { name: "Vendor Glucometer", patient: "P-GLU", unsetUntil: T0 + 12 * HOUR },
  { name: "Vendor Inhaler Sensor", patient: "P-INH-1", sensorId: "INH0001" },
  { name: "Vendor Inhaler Sensor", patient: "P-INH-2", sensorId: "INH0002" },
  { name: "Vendor Bariatric Scale", patient: "P-BAR" },
];

interface ApiRecord {
  metric: string;
  value_1: string;
  value_2: string;
  timestamp: string;
  estimated_timestamp: boolean;
  filter_params: Record<string, unknown> | null;
  hardware_uuid: string;
  sensor_code: string;
}

describe("cellular gateway with direct-path devices against rpmlab serve", () => {
  let serve: ServeLab | undefined;
  let gateway: Gateway | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await gateway?.stop();
    await serve?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it("relays every reading exactly once, through an outage and a restart", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    serve = await ServeLab.start(clock);
    const lab = serve;
    dir = mkdtempSync(join(tmpdir(), "rpmlab-gw-"));

    // Activated while the lab has never heard of the gateway: Unknown Gateway ID.
    const ids: string[] = [];
    for (const entry of FLEET) {
      const created = await lab.hwi<{ id: string; status: string }>("POST", "hwi-devices/", {
        device: { name: entry.name, hardware_uuid: GW },
        patient: { external_id: entry.patient },
        ...(entry.sensorId === undefined ? {} : { sensor_id: entry.sensorId }),
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.status).toBe("Unknown Gateway ID");
      ids.push(created.body.id);
    }
    const credentials = await lab.gatewayCredentials(GW);

    const radio = new DirectRadio();
    const devices = FLEET.map(
      (entry, i) =>
        new DirectDevice(
          {
            profile: catalogue.get(entry.name),
            clock,
            serial: entry.sensorId ?? `SN000${i}`,
            address: deviceMacAddress(ids[i]!),
            clockOffsetMs: entry.unsetUntil === undefined ? 0 : -YEARS_20,
          },
          radio,
        ),
    );
    const glucometer = devices[1]!;
    glucometer.setInRange(false);

    const open = async () => {
      const gw = await Gateway.open({
        clock,
        rng: new Rng("gateway-e2e"),
        catalogue,
        gatewayUuid: GW,
        broker: { url: lab.info.mqtt_url, ...credentials },
        ble: new DirectBle(radio),
        outbox: { dir },
        link: { profile: STEADY_LINK_PROFILE },
      });
      gateway = gw;
      return gw;
    };
    let gw = await open();

    const settle = async () => {
      await gw.modem.session.settled();
      await gw.modem.drainer.settled();
    };
    /** Steps the Clock to `until`, letting the network I/O of each step finish. */
    const pump = async (until: number, step = 10 * MIN) => {
      while (clock.now() < until) {
        await clock.run({ until: Math.min(until, clock.now() + step) });
        await settle();
      }
    };
    /** Waits for an exchange with the service (real I/O), a virtual second at a time. */
    const eventually = async (check: () => Promise<boolean>, what: string) => {
      const deadline = performance.now() + 20_000;
      while (!(await check())) {
        if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await clock.run({ until: clock.now() + 1000 });
        await settle();
      }
    };
    type Info = {
      whitelisted_devices: { mac_address: string; sensor_code: string; whitelist_status: string }[];
      last_signal_strength: number;
      last_checkin_time: string | null;
      firmware_version: string | null;
      provisioned: boolean;
    };
    const info = async () => (await lab.hwi<Info>("GET", `gateway-info/${GW}/`)).body;

    await gw.start();
    // First check-in → adoption (RE) → whitelist downlink → the gateway reports holding it → CO.
    await eventually(async () => {
      const got = await lab.hwi<Info>("GET", `gateway-info/${GW}/`);
      return (
        got.status === 200 &&
        got.body.whitelisted_devices.length === FLEET.length &&
        got.body.whitelisted_devices.every((d) => d.whitelist_status === "CO")
      );
    }, "the whole whitelist confirmed");
    const confirmed = await info();
    expect(confirmed.whitelisted_devices.map((d) => d.mac_address).sort()).toEqual(
      devices.map((d) => d.address).sort(),
    );
    expect(confirmed).toMatchObject({
      last_signal_strength: STEADY_LINK_PROFILE.meanSignal,
      firmware_version: gw.modem.identity.firmwareVersion,
      provisioned: true,
    });
    expect(confirmed.last_checkin_time).not.toBeNull();
    expect(
      gw.rules
        .list()
        .map((d) => d.sensorId)
        .filter((id) => id !== null)
        .sort(),
    ).toEqual(["INH0001", "INH0002"]);
    for (const id of ids) {
      const device = await lab.hwi<{ status: string }>("GET", `hwi-devices/${id}/`);
      expect(device.body.status).toBe("Active");
    }

    // Three days of each device's readings, taken on the Clock.
    const start = clock.now() + HOUR;
    const days = 3;
    const outcomes = new Map<GeneratedReading, Promise<MeasureOutcome>>();
    const readings = FLEET.map((entry, i) => {
      const profile = catalogue.get(entry.name);
      const all = generateReadings({
        devices: [profile],
        patient: patients.get(profile.family === "inhaler_sensor" ? "copd" : "hypertensive"),
        rng: new Rng(`gateway-e2e/${i}`),
        start,
        days,
        duplicateRate: 0,
        ...(entry.sensorId === undefined
          ? {}
          : { settings: { [profile.name]: { serialNumber: entry.sensorId } } }),
      });
      for (const r of all) {
        clock.schedule(r.timestamp, () => outcomes.set(r, devices[i]!.take(r)));
      }
      return all;
    });
    clock.schedule(FLEET[1]!.unsetUntil!, () => glucometer.setInRange(true));

    // An outage of six hours: readings wait in the outbox. Half-way, the gateway restarts.
    const outageAt = start + 30 * HOUR;
    await pump(outageAt);
    gw.modem.link.outage(6 * HOUR);
    await pump(outageAt + 3 * HOUR);
    const waiting = gw.stats.outbox.queued;
    expect(waiting).toBeGreaterThan(0);
    await gw.stop();
    gw = await open();
    expect(gw.stats.outbox.queued).toBe(waiting);
    gw.modem.link.outage(3 * HOUR); // still in the outage after the restart
    await gw.start();
    await pump(start + days * 24 * HOUR + HOUR);
    for (let i = 0; i < 200 && gw.stats.outbox.queued > 0; i++) await pump(clock.now() + MIN, MIN);
    expect(gw.stats.outbox).toEqual({ queued: 0, dropped: 0 });

    // Every reading left its device: live, or stored and fetched.
    const fates = await Promise.all(readings.flat().map((r) => outcomes.get(r)!));
    expect(fates.length).toBeGreaterThan(20);
    expect(fates.filter((f) => f === "lost")).toEqual([]);
    // Devices without RACP hand their store over on subscription and keep nothing.
    for (const device of devices) {
      const racp = device.ble.profile.gatt.characteristics.some((c) => c.role === "racp");
      if (!racp) expect(device.ble.store.size).toBe(0);
    }

    await eventually(async () => {
      let stored = 0;
      for (const id of ids) {
        stored += (await lab.hwi<unknown[]>("GET", `hwi-devices/${id}/measurements/`)).body.length;
      }
      const expected = readings.flat().reduce((n, r) => n + r.records.length, 0);
      return stored >= expected;
    }, "every record stored");

    const unsetUntil = FLEET[1]!.unsetUntil!;
    for (const [i, entry] of FLEET.entries()) {
      const stored = (await lab.hwi<ApiRecord[]>("GET", `hwi-devices/${ids[i]}/measurements/`))
        .body;
      const keys = stored.map(recordKey);
      expect(new Set(keys).size, `${entry.name}: a record twice`).toBe(keys.length);
      // The device stamps a reading with its own clock, to the second: the lab's time for a
      // clock the gateway set (Current Time carries 1/256 s, so the device may read up to one
      // second behind); a reading kept while the clock was unset is stored at the gateway's
      // receive time, estimated.
      const expected = new Map<string, boolean>();
      for (const r of readings[i]!) {
        const estimated = entry.unsetUntil !== undefined && r.timestamp < unsetUntil;
        const timestamp = toIsoMicros(
          estimated ? unsetUntil : Math.floor(r.timestamp / 1000) * 1000,
        );
        for (const rec of r.records) {
          const value = {
            metric: rec.metric,
            timestamp,
            value_1: rec.value_1.toFixed(2),
            value_2: rec.value_2 === null ? "0.00" : rec.value_2.toFixed(2),
            filter_params: rec.filter_params,
          };
          expected.set(recordKey(value), estimated);
        }
      }
      const unexpected: string[] = [];
      for (const record of stored) {
        const asTaken = [0, 1000]
          .map((late) =>
            recordKey({ ...record, timestamp: toIsoMicros(Date.parse(record.timestamp) + late) }),
          )
          .find((key) => expected.has(key));
        if (asTaken === undefined) {
          unexpected.push(recordKey(record));
          continue;
        }
        expect(record.estimated_timestamp, asTaken).toBe(expected.get(asTaken));
        expected.delete(asTaken);
        expect(record).toMatchObject({
          hardware_uuid: GW,
          sensor_code: catalogue.get(entry.name).sensor_code,
        });
      }
      expect(unexpected, `${entry.name}: records not taken`).toEqual([]);
      expect([...expected.keys()], `${entry.name}: records missing`).toEqual([]);
      const estimatedCount = stored.filter((r) => r.estimated_timestamp).length;
      if (entry.unsetUntil !== undefined) expect(estimatedCount).toBeGreaterThan(0);
      else expect(estimatedCount).toBe(0);
    }
    const stats = gw.stats;
    expect(stats.uplink.failures).toBe(0);
    // Its clock was right from the start, through the outage and the restart: never moved.
    expect(stats.clockCorrections).toBe(0);
    expect(stats.whitelist).toEqual({ held: FLEET.length, refusedEntries: 0 });

    // Check-ins carry the signal; a gateway silent for over an hour reads 0 (spec 2.3).
    // A check-in still in flight would land after the stop: wait for its PUBACK (= committed).
    await gw.modem.session.landed();
    expect((await info()).last_signal_strength).toBe(STEADY_LINK_PROFILE.meanSignal);
    // The signal moves (a fault hook; the walk then drifts back to its mean): the next check-in
    // reports what the link shows then.
    let reported = -1;
    gw.events.on("checkin", ({ signal }) => {
      reported = signal;
    });
    gw.modem.link.setSignal(30);
    await pump(clock.now() + 15 * MIN, MIN);
    await gw.modem.session.landed();
    expect(reported).toBeGreaterThan(STEADY_LINK_PROFILE.meanSignal);
    const live = await info();
    expect(live.last_signal_strength).toBe(reported);
    const lastCheckin = live.last_checkin_time;
    await gw.stop();
    gateway = undefined;
    clock.runSync({ until: clock.now() + HOUR + MIN });
    const silent = await info();
    expect(silent.last_signal_strength).toBe(0);
    expect(silent.last_checkin_time).toBe(lastCheckin);
  }, 120_000);
});
