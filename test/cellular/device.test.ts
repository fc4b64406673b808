/**
 * A direct-cellular device off the network from the start (no broker needed): what it keeps,
 * drops and loses, and the record sequences it writes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { CellularDevice, type ReadingFate, readingKey } from "../../src/cellular/device.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { luhnValid } from "../../src/cellular/modem-identity.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import type { PhysicalReading } from "../../src/readings/types.ts";

const catalogue = Catalogue.load();
const START = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

async function offline(name: string, seed: string, capacity = 1000, dir?: string, from = START) {
  const profile = catalogue.get(name);
  const clock = new VirtualClock({ startMs: from });
  const readings = generateReadings({
    devices: [profile],
    patient: PatientModels.load().get("normal"),
    rng: new Rng(seed).fork("readings"),
    start: START,
    days: 10,
    duplicateRate: 0.3,
  }).filter((r) => r.timestamp >= from);
  const device = await CellularDevice.open({
    profile,
    clock,
    rng: new Rng(seed).fork("device"),
    readings,
    // Nothing listens there: the device never gets on the network in these tests.
    broker: { url: "mqtt://127.0.0.1:1" },
    link: { profile: STEADY_LINK_PROFILE },
    outbox: { capacity, ...(dir === undefined ? {} : { dir }) },
  });
  const events: { reading: GeneratedReading; sequence: number; fate: ReadingFate }[] = [];
  device.events.on("reading", (e) => events.push(e));
  device.modem.link.outage();
  return { device, readings, events, clock };
}

async function offlineFor10Days(name: string, seed: string, capacity = 1000) {
  const run = await offline(name, seed, capacity);
  await run.device.start();
  await run.clock.run({ until: START + 11 * DAY });
  return run;
}

describe("CellularDevice, off the network", () => {
  it("a type that stores offline keeps every reading, up to its outbox, dropping the oldest", async () => {
    const { device, readings, events } = await offlineFor10Days("Vendor Cellular BPM", "bpm", 5);
    const originals = readings.filter((r) => !r.duplicate);
    const resends = readings.length - originals.length;
    expect(device.finished).toBe(true);
    expect(resends).toBeGreaterThan(0);
    expect(device.stats).toEqual({
      taken: originals.length,
      sent: 0,
      storedOffline: originals.length,
      lostByDesign: 0,
      dropped: readings.length - 5,
      duplicatesSent: resends,
      queued: 5,
    });
    expect(events.every((e) => e.fate === "stored-offline")).toBe(true);
    // The newest five are what is left: received when taken (a re-send right after the
    // reading it follows, src/readings/duplicates.ts).
    let sentAt = 0;
    const taken = readings.map((r) => {
      sentAt = Math.max(sentAt, r.timestamp);
      return sentAt;
    });
    const left = device.modem.outbox.take()!.entries.map((e) => e.item.receivedAt);
    expect(left).toEqual(taken.slice(-5));
    await device.stop();
    // What the unit takes back to the vendor if replaced now: the readings those five came from.
    expect(device.held()).toEqual(readings.slice(-5));
    expect(device.held()[0]).toBe(readings.at(-5));
  });

  it("says which readings its full outbox dropped, as it took them: all but the newest it holds", async () => {
    const run = await offline("Vendor Cellular BPM", "bpm", 5);
    const dropped: PhysicalReading[] = [];
    run.device.events.on("dropped", (e) => dropped.push(...e.readings));
    await run.device.start();
    await run.clock.run({ until: START + 11 * DAY });
    expect(dropped).toHaveLength(run.readings.length - 5);
    expect(dropped).toEqual(run.readings.slice(0, -5));
    expect(dropped[0]).toBe(run.readings[0]);
    await run.device.stop();
  });

  it("a unit reopened on its disk outbox holds what an earlier run of it left there too", async () => {
    // `rpmlab cellular-device --outbox DIR` run twice, off the network both times: the outbox
    // file keeps the first run's readings, and the unit going back to the vendor now holds both.
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-cell-again-"));
    try {
      const first = await offline("Vendor Cellular BPM", "again", 1000, dir);
      await first.device.start();
      await first.clock.run({ until: START + 3 * DAY });
      const left = first.device.held();
      expect(left.length).toBeGreaterThan(0);
      await first.device.stop();

      const second = await offline("Vendor Cellular BPM", "again", 1000, dir, START + 3 * DAY);
      await second.device.start();
      await second.clock.run({ until: START + 6 * DAY });
      const own = second.events.map((e) => e.reading);
      expect(own.length).toBeGreaterThan(0);
      expect(second.device.stats.queued).toBe(left.length + own.length);
      const held = second.device.held();
      expect(held).toHaveLength(left.length + own.length);
      // This run's are the readings it took; the earlier run's, what their records say.
      expect(held.slice(left.length)).toEqual(own);
      expect(held[left.length]).toBe(own[0]);
      const physical = ({ timestamp, timezone_offset, records }: PhysicalReading) => ({
        timestamp,
        timezone_offset,
        records,
      });
      expect(held.slice(0, left.length)).toEqual(left.map(physical));
      await second.device.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the pulse oximeter does not store offline: every reading is lost by design, counted", async () => {
    const { device, readings } = await offlineFor10Days("Vendor Cellular Pulse Ox", "pox");
    expect(device.stats).toMatchObject({
      taken: readings.filter((r) => !r.duplicate).length,
      lostByDesign: readings.filter((r) => !r.duplicate).length,
      storedOffline: 0,
      duplicatesSent: 0,
      queued: 0,
    });
    await device.stop();
  });

  it("a re-send carries its original's record sequence; new readings take the next ones", async () => {
    const { device, events } = await offlineFor10Days("Vendor Cellular Glucometer", "glu");
    const byKey = new Map<string, number>();
    let last = -1;
    for (const { reading, sequence } of events) {
      const key = readingKey(reading);
      if (reading.duplicate) {
        expect(sequence).toBe(byKey.get(key));
      } else {
        expect(sequence).toBeGreaterThan(last);
        byKey.set(key, sequence);
        last = sequence;
      }
    }
    expect(events.some((e) => e.reading.duplicate)).toBe(true);
    await device.stop();
  });

  it("a seed gives the same IMEI (valid Luhn) and the same readings", async () => {
    const a = await offlineFor10Days("Vendor Cellular Scale", "same");
    const b = await offlineFor10Days("Vendor Cellular Scale", "same");
    expect(a.device.imei).toBe(b.device.imei);
    expect(luhnValid(a.device.imei)).toBe(true);
    expect(b.events.map((e) => [e.sequence, e.reading.records])).toEqual(
      a.events.map((e) => [e.sequence, e.reading.records]),
    );
    await a.device.stop();
    await b.device.stop();
  });

  it("an outbox that cannot take a reading (a full disk): the device stops taking them and says why", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-cell-full-"));
    try {
      const { device, events, clock } = await offline(
        "Vendor Cellular Glucometer",
        "full",
        1000,
        dir,
      );
      // SQLite's own SQLITE_FULL, as from a full disk: the file may not grow past its size now.
      const db = (device.modem.outbox as unknown as { db: Database.Database }).db;
      db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true })}`);
      const failed: { error: Error }[] = [];
      device.events.on("failed", (e) => failed.push(e));
      await device.start();
      await clock.run({ until: START + 11 * DAY });
      expect(failed).toHaveLength(1);
      expect(isRpmlabError(failed[0]!.error, "E_OUTBOX_UNAVAILABLE")).toBe(true);
      expect(failed[0]!.error.message).toMatch(/cannot write to the outbox .*full/);
      expect(device.failure).toBe(failed[0]!.error);
      // What it had kept stays; nothing is taken after the failure.
      const kept = device.stats.queued;
      expect(kept).toBe(events.length);
      expect(kept).toBeGreaterThan(0);
      await device.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a gateway-connected type is refused with E_USAGE naming --ble", async () => {
    const clock = new VirtualClock({ startMs: START });
    const error = await CellularDevice.open({
      profile: catalogue.get("Vendor Pulse Ox"),
      clock,
      rng: new Rng(1),
      readings: [],
      broker: { url: "mqtt://127.0.0.1:1" },
    }).catch((e: unknown) => e);
    expect(isRpmlabError(error, "E_USAGE")).toBe(true);
    expect((error as Error).message).toMatch(/--ble/);
  });
});
