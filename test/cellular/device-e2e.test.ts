/**
 * Issue 6 §2, end to end: each direct-cellular device type, activated on its IMEI through the
 * HWI API, runs on the virtual Clock against the lab's embedded broker with lab-issued
 * credentials, through an outage, and every reading it did not lose by design is read back from
 * GET hwi-devices/{id}/measurements/ exactly once.
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CellularDevice, readingKey } from "../../src/cellular/device.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { Rng } from "../../src/core/rng.ts";
import { toIsoMicros } from "../../src/core/time.ts";
import type { Ingestor } from "../../src/ingest/ingestor.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { recordKey } from "../../src/scenario/run/ledger.ts";
import { ADMIN, type Lab, makeLab } from "../api/helpers.ts";
import { activate, catalogue, hwiCall, ok } from "../api/hwi-fixtures.ts";
import { IngestLab } from "../ingest/harness.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const DAYS = 6;

const CELLULAR = catalogue.profiles.filter((p) => p.connectivity === "cellular");

interface ApiRecord {
  metric: string;
  value_1: string;
  value_2: string;
  timestamp: string;
  timezone_offset: number;
  filter_params: Record<string, unknown> | null;
  hardware_uuid: string;
  sensor_code: string | null;
}

describe("direct-cellular devices: reading → modem → broker → ingestion → API, nothing lost", () => {
  let lab: Lab;
  let mqtt: IngestLab;
  let ingestor: Ingestor;
  const running: CellularDevice[] = [];

  beforeEach(async () => {
    lab = await makeLab();
    mqtt = new IngestLab(lab.store, lab.clock);
    await mqtt.start();
    ingestor = await mqtt.ingestor({ via: "tap" });
    await ingestor.start();
  });
  afterEach(async () => {
    for (const device of running.splice(0)) await device.stop();
    await ingestor.stop();
    await mqtt.stop();
    await lab.close();
  });

  expect(CELLULAR.map((p) => p.name).sort()).toEqual([
    "Vendor Cellular BPM",
    "Vendor Cellular Glucometer",
    "Vendor Cellular Pulse Ox",
    "Vendor Cellular Scale",
  ]);

  for (const [n, profile] of CELLULAR.entries())
    it(`${profile.name} (${profile.stores_offline ? "stores offline" : "does not store offline"})`, async () => {
      const imei = ["356938035643809", "490154203237518", "352099001761481", "358240051111110"][n]!;
      const clock = lab.clock;
      const device = await activate(lab, {
        device: { name: profile.name, hardware_uuid: imei },
        patient: { external_id: `P-${n}` },
      });
      expect(device.status).toBe("Active");
      const issued = await lab.app.inject({
        method: "POST",
        url: "/lab/v1/mqtt-credentials/",
        headers: ADMIN,
        payload: { role: "cellular", username: imei },
      });
      expect(issued.statusCode, issued.body).toBe(201);
      const { password } = issued.json() as { password: string };

      const start = clock.now() + HOUR;
      const readings = generateReadings({
        devices: [profile],
        patient: PatientModels.load().get("normal"),
        rng: new Rng(`e2e-${n}`).fork("readings"),
        start,
        days: DAYS,
        duplicateRate: 0.2,
      });
      // A two-day outage in the middle: readings are taken while the device is off the network.
      const outage = { atMs: start + 2 * DAY, forMs: 2 * DAY };
      const cell = await CellularDevice.open({
        profile,
        clock,
        rng: new Rng(`e2e-${n}`).fork("device"),
        imei,
        readings,
        broker: { url: mqtt.broker.url, username: imei, password },
        link: { profile: STEADY_LINK_PROFILE, scheduledOutages: [outage] },
        maxBatch: 16,
      });
      running.push(cell);
      const fates = new Map<string, Set<string>>();
      cell.events.on("reading", ({ reading, fate }) => {
        const key = readingKey(reading);
        fates.set(key, (fates.get(key) ?? new Set()).add(fate));
      });
      await cell.start();

      // Step the Clock an hour at a time; between steps let the modem's network I/O finish.
      for (let t = clock.now(); t < start + (DAYS + 1) * DAY; t += HOUR) {
        await clock.run({ until: t });
        await cell.modem.session.settled();
        await cell.modem.drainer.settled();
      }
      for (let i = 0; i < 100 && cell.stats.queued > 0; i++) {
        await clock.run({ until: clock.now() + 60_000 });
        await cell.modem.session.settled();
        await cell.modem.drainer.settled();
      }
      expect(cell.finished).toBe(true);

      const stats = cell.stats;
      const originals = readings.filter((r) => !r.duplicate);
      expect(stats.taken).toBe(originals.length);
      expect(stats.queued).toBe(0);
      expect(stats.dropped).toBe(0);
      const during = originals.filter(
        (r) => r.timestamp >= outage.atMs && r.timestamp < outage.atMs + outage.forMs,
      );
      expect(during.length).toBeGreaterThan(0);
      if (profile.stores_offline) {
        expect(stats.storedOffline).toBe(during.length);
        expect(stats.lostByDesign).toBe(0);
      } else {
        expect(stats.lostByDesign).toBe(during.length);
        expect(stats.storedOffline).toBe(0);
      }
      expect(stats.duplicatesSent).toBeGreaterThan(0);
      // The broker acknowledged every queued reading, re-sends included.
      expect(stats.sent).toBe(stats.taken - stats.lostByDesign + stats.duplicatesSent);

      // What the API must hold: every reading that left the device at least once.
      const delivered = (r: GeneratedReading) =>
        [...(fates.get(readingKey(r)) ?? [])].some((f) => f !== "lost-by-design");
      const expected = originals.filter(delivered).flatMap((r) =>
        r.records.map((rec) => ({
          metric: rec.metric,
          timestamp: toIsoMicros(r.timestamp),
          value_1: rec.value_1.toFixed(2),
          value_2: rec.value_2 === null ? "0.00" : rec.value_2.toFixed(2),
          filter_params: rec.filter_params,
        })),
      );
      const stored = ok<ApiRecord[]>(
        await hwiCall(lab)("GET", `hwi-devices/${device.id}/measurements/`),
      );
      expect(expected.length).toBeGreaterThan(10);
      const keys = stored.map(recordKey);
      // Exactly once: no record twice, despite re-sends and retries.
      expect(new Set(keys).size).toBe(keys.length);
      expect([...keys].sort()).toEqual(expected.map(recordKey).sort());
      for (const record of stored) {
        expect(record).toMatchObject({ hardware_uuid: imei, sensor_code: null });
      }
      if (!profile.stores_offline) {
        const lost = originals.filter((r) => !delivered(r));
        expect(lost.length).toBeGreaterThan(0);
        const lostTimes = new Set(lost.map((r) => toIsoMicros(r.timestamp)));
        expect(stored.filter((r) => lostTimes.has(r.timestamp))).toEqual([]);
      }
    });
});
