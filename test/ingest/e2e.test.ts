/**
 * Catalogue-wide round trip (STYLE habit 13): every device type's generated readings, encoded
 * with the shared codecs, published as a gateway or cellular device would over the embedded
 * broker (credentials and ACL on), ingested, and read back from the store equal to what was
 * generated — re-sends and redeliveries stored once, orphans kept, status applied.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { Ingestor } from "../../src/ingest/ingestor.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import type { MeasurementRow } from "../../src/store/types-ingest.ts";
import { killConnection } from "../mqtt/helpers.ts";
import {
  asRecord,
  catalogue,
  checkinPayload,
  deviceForPatient,
  expectedRecords,
  RECEIVED,
  readingsOf,
  type Sender,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";
import { IngestLab, Outcomes } from "./harness.ts";

/** Readings per envelope, as a gateway's outbox drains them. */
const OUTBOX = 4;
const key = (r: ReturnType<typeof asRecord>) =>
  `${r.timestamp}/${r.metric}/${JSON.stringify(r.filter_params)}/${r.value_1}/${r.value_2}/${r.timezone_offset}`;
const sorted = <T extends ReturnType<typeof asRecord>>(records: readonly T[]) =>
  [...records].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

/**
 * How messages reach the ingestion core — a subscription (as on an external broker), or the
 * embedded broker's tap (as `rpmlab serve` does) — and where the batches commit: in this thread
 * on the memory store, or in a worker thread on a SQLite file (src/ingest/worker-processor.ts).
 */
const MODES = [
  { name: "subscription, in process, memory store", via: "subscription", file: false },
  { name: "broker tap, worker thread, SQLite file", via: "tap", file: true },
] as const;

for (const mode of MODES)
  describe(`device → broker → ingestion → store, for every device type of the catalogue (${mode.name})`, () => {
    let store: Store;
    let clock: VirtualClock;
    let dir: string | undefined;
    let lab: IngestLab;
    let ingestor: Ingestor;
    let outcomes: Outcomes;
    const senders = catalogue.profiles.map((p, i) => senderFor(p, i));
    /** Every third device type stays unactivated: its readings are orphans. */
    const orphan = (i: number) => i % 3 === 2;
    const generated = new Map<Sender, GeneratedReading[]>();
    const devices = new Map<Sender, string>();
    let published = 0;

    beforeAll(async () => {
      clock = new VirtualClock({ startMs: RECEIVED });
      dir = mode.file ? mkdtempSync(join(tmpdir(), "rpmlab-ingest-e2e-")) : undefined;
      const spec = dir === undefined ? "memory" : `sqlite:${join(dir, "lab.db")}`;
      store = await openStore(spec, { clock, rng: new Rng("ingest") });
      lab = new IngestLab(store, clock);
      await lab.start();
      const account = await store.accounts.create({
        clientDomain: "e2e",
        environment: "development",
      });
      for (const [i, sender] of senders.entries()) {
        if (orphan(i)) continue;
        const device = await deviceForPatient(store, account.id, sender, `P-${i}`);
        devices.set(sender, device.id);
      }
      ingestor = await lab.ingestor({
        via: mode.via,
        store,
        ...(mode.file ? { workerStore: spec } : {}),
      });
      outcomes = new Outcomes(ingestor);
      await ingestor.start();

      for (const sender of senders) {
        const readings = readingsOf(sender);
        expect(readings.length, sender.profile.name).toBeGreaterThan(0);
        generated.set(sender, readings);
        const client = await lab.device(
          sender.profile.connectivity === "cellular" ? "cellular" : "gateway",
          sender.hardwareUuid,
        );
        for (let start = 0; start < readings.length; start += OUTBOX) {
          const message = uplinkMessage(
            sender,
            `${sender.hardwareUuid}-${start}`,
            readings.slice(start, start + OUTBOX),
            start,
          );
          await client.publishAsync(message.topic, message.payload, { qos: 1 });
          published++;
          // The first message goes out twice, as after a lost PUBACK: same message id.
          if (start === 0) {
            await client.publishAsync(message.topic, message.payload, { qos: 1 });
            published++;
          }
        }
      }
      await outcomes.count(published, 60_000);
    }, 120_000);

    afterAll(async () => {
      await lab.stop();
      await store.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    async function rowsOf(sender: Sender): Promise<MeasurementRow[]> {
      const deviceId = devices.get(sender);
      if (deviceId === undefined) {
        return store.measurements.listOrphans({
          hardwareUuid: sender.hardwareUuid,
          sensorCode: sender.profile.sensor_code,
        });
      }
      const account = (await store.accounts.list())[0]!;
      return (await store.measurements.query({ accountId: account.id, deviceId, limit: 100_000 }))
        .rows;
    }

    it("acknowledges every message after storing it: nothing dead-lettered", () => {
      expect(outcomes.all).toHaveLength(published);
      expect(
        outcomes.all.filter(
          (o) => o.kind === "dead_letter" || (o.kind === "uplink" && o.deadLetter),
        ),
      ).toEqual([]);
      expect(outcomes.all.filter((o) => o.kind === "redelivered")).toHaveLength(senders.length);
    });

    for (const [i, profile] of catalogue.profiles.entries()) {
      it(`${profile.name}: stored rows equal the generated records, each once${orphan(i) ? " (orphans)" : ""}`, async () => {
        const sender = senders[i]!;
        const rows = await rowsOf(sender);
        const readings = generated.get(sender)!;
        expect(sorted(rows.map(asRecord))).toEqual(sorted(expectedRecords(readings)));
        for (const row of rows) {
          expect(row.source).toBe(sender.source);
          expect(row.hardwareUuid).toBe(sender.hardwareUuid);
          expect(row.created).toBe(RECEIVED);
          expect(row.raw).not.toBeNull();
          expect(row.characteristicUuid).not.toBeNull();
          expect(row.deviceId).toBe(devices.get(sender) ?? null);
        }
      });
    }

    it("re-sent readings were recognised as duplicates, not stored", () => {
      const resent = [...generated.values()].flat().filter((r) => r.duplicate).length;
      expect(resent).toBeGreaterThan(0);
      const duplicates = outcomes.all.reduce(
        (n, o) => n + (o.kind === "uplink" ? o.duplicates : 0),
        0,
      );
      expect(duplicates).toBeGreaterThanOrEqual(resent);
    });

    it("records last_measurement of each gateway and attaches orphans on activation", async () => {
      const [gatewaySender] = senders.filter((s) => s.profile.connectivity === "gateway");
      const newest = Math.max(...generated.get(gatewaySender!)!.map((r) => r.timestamp));
      expect((await store.gateways.get(gatewaySender!.hardwareUuid))?.lastMeasurement).toBe(newest);
      const index = senders.findIndex((_, i) => orphan(i));
      const sender = senders[index]!;
      const orphans = await rowsOf(sender);
      const account = (await store.accounts.list())[0]!;
      const device = await store.devices.create(account.id, {
        name: sender.profile.name,
        sensorCode: sender.profile.sensor_code,
        hardwareUuid: sender.hardwareUuid,
        sensorId: sender.sensorId,
        status: "Delivered",
      });
      // What device activation does (src/fulfilment/hardware-binding.ts).
      const attached = await store.measurements.attachOrphans(
        { hardwareUuid: sender.hardwareUuid, sensorCode: sender.profile.sensor_code },
        {
          accountId: account.id,
          deviceId: device.id,
          deviceName: device.name,
          patientExternalId: null,
        },
      );
      expect(attached).toHaveLength(orphans.length);
      const byDevice = await store.measurements.query({
        accountId: account.id,
        deviceId: device.id,
        limit: 100_000,
      });
      expect(byDevice.rows).toHaveLength(orphans.length);
    });

    it("applies a gateway's retained status, then its last will when its link dies", async () => {
      const gw = senders.find((s) => s.profile.connectivity === "gateway")!;
      const seen = outcomes.all.length;
      const status = topicOf("gw/status", gw.hardwareUuid);
      const client = await lab.device("gateway", gw.hardwareUuid, {
        will: {
          topic: status,
          payload: Buffer.from('{"v":1,"online":false}'),
          qos: 1,
          retain: true,
        },
      });
      await client.publishAsync(status, checkinPayload(21, Date.UTC(2026, 2, 2)), {
        qos: 1,
        retain: true,
      });
      await outcomes.count(seen + 1);
      expect(await store.gateways.get(gw.hardwareUuid)).toMatchObject({
        lastSignalStrength: 21,
        firmwareVersion: "3.1.0",
        provisioned: true,
        // Stamped with the lab's clock, in a worker thread too.
        modified: clock.now(),
      });
      await killConnection(client);
      await outcomes.count(seen + 2);
      expect(await store.gateways.get(gw.hardwareUuid)).toMatchObject({
        lastSignalStrength: 0,
        firmwareVersion: "3.1.0",
      });
    });
  });
