/**
 * The ingestion worker thread (src/ingest/worker-processor.ts): the same batch gives the same
 * result there as in this thread; its errors keep their codes; the API's connection keeps
 * writing while the worker commits.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { fromWire, toWire } from "../../src/core/wire-error.ts";
import type { Inbound } from "../../src/ingest/prepare.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import { WorkerProcessor, workerStoreOf } from "../../src/ingest/worker-processor.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import {
  catalogue,
  deviceForPatient,
  inbound,
  RECEIVED,
  readingsOf,
  type Sender,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";

const senders = catalogue.profiles.map((p, i) => senderFor(p, i));

/** A fresh SQLite file with an account and a device on every sender. */
async function labStore(path: string, clock: VirtualClock): Promise<Store> {
  const store = await openStore(`sqlite:${path}`, { clock, rng: new Rng("worker") });
  const account = await store.accounts.create({ clientDomain: "w", environment: "development" });
  for (const [i, sender] of senders.entries()) {
    await deviceForPatient(store, account.id, sender, `P-${i}`);
  }
  return store;
}

/** Every sender's readings, a re-sent message, a status, and messages that cannot be stored. */
function batchOf(): Inbound[] {
  const out: Inbound[] = [];
  for (const sender of senders) {
    const m = uplinkMessage(sender, `${sender.hardwareUuid}-1`, readingsOf(sender, 2).slice(0, 3));
    out.push(inbound(m), inbound(m));
  }
  const gateway = senders.find((s) => s.profile.connectivity === "gateway") as Sender;
  out.push(
    inbound({
      topic: topicOf("gw/status", gateway.hardwareUuid),
      payload: Buffer.from(
        JSON.stringify({
          v: 1,
          online: true,
          signal_strength: 12,
          firmware_version: "3.1.0",
          bootloader_version: "1.2.0",
          provisioned: true,
          checkin_at: "2026-03-02T00:00:00Z",
        }),
      ),
    }),
    inbound({ topic: topicOf("gw/up", gateway.hardwareUuid), payload: Buffer.from("{") }),
    inbound({ topic: "not/ours", payload: Buffer.from("{}") }),
  );
  return out;
}

describe("the ingestion worker thread", () => {
  let dir: string;
  let clock: VirtualClock;
  const stores: Store[] = [];
  const workers: WorkerProcessor[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-ingest-worker-"));
    clock = new VirtualClock({ startMs: RECEIVED });
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    for (const store of stores.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function worker(path: string): Promise<WorkerProcessor> {
    const spec = workerStoreOf(`sqlite:${path}`)!;
    const processor = new WorkerProcessor({ storeSpec: spec, catalogue, clock });
    workers.push(processor);
    await processor.start();
    return processor;
  }

  it("is only for SQLite files: the memory store lives in this thread alone", () => {
    expect(workerStoreOf("sqlite:./lab.db")).toBe("sqlite:./lab.db");
    expect(workerStoreOf("memory")).toBeUndefined();
    expect(workerStoreOf("postgres://u@h/db")).toBeUndefined();
  });

  it("commits a batch as the processor in this thread does: same outcomes, rows and ids", async () => {
    const here = await labStore(join(dir, "here.db"), clock);
    const there = await labStore(join(dir, "there.db"), clock);
    stores.push(here, there);
    const batch = batchOf();
    const expected = await new MessageProcessor({ store: here, catalogue }).process(batch);
    const result = await (await worker(join(dir, "there.db"))).process(batch);
    expect(expected.stored.length).toBeGreaterThan(senders.length);
    expect(expected.deadLetters).toHaveLength(2);
    expect(result).toEqual(expected);
    // Committed: the main thread's connection reads it.
    const account = (await there.accounts.list())[0]!;
    const device = (await there.devices.list(account.id)).rows[0]!;
    const stored = await there.measurements.query({
      accountId: account.id,
      deviceId: device.id,
      limit: 1000,
    });
    expect(stored.rows.map((r) => r.id)).toEqual(
      result.stored.filter((r) => r.deviceId === device.id).map((r) => r.id),
    );
    // Both stores hold the same rows, byte for byte.
    for (const { id } of result.stored) {
      expect(await there.measurements.get(id)).toEqual(await here.measurements.get(id));
    }
  });

  it("answers a batch already committed as redelivered, and stores nothing twice", async () => {
    const store = await labStore(join(dir, "lab.db"), clock);
    stores.push(store);
    const processor = await worker(join(dir, "lab.db"));
    const batch = batchOf().slice(0, 4);
    const first = await processor.process(batch);
    const again = await processor.process(batch);
    expect(first.stored.length).toBeGreaterThan(0);
    expect(again.stored).toEqual([]);
    expect(again.outcomes.map((o) => o.kind)).toEqual(batch.map(() => "redelivered"));
  });

  it("keeps the API's connection writing while it commits (both take the lock, neither fails)", async () => {
    const store = await labStore(join(dir, "lab.db"), clock);
    stores.push(store);
    const processor = await worker(join(dir, "lab.db"));
    const account = (await store.accounts.list())[0]!;
    const readings = senders.map((s) => readingsOf(s, 10, 0));
    const batches = Array.from({ length: 6 }, (_, n) =>
      senders.flatMap((s, i) => {
        const some = readings[i]!.slice(2 * n, 2 * n + 2);
        return some.length === 0
          ? []
          : [inbound(uplinkMessage(s, `${s.hardwareUuid}-b${n}`, some))];
      }),
    );
    let ingesting = true;
    const ingest = (async () => {
      try {
        for (const batch of batches) await processor.process(batch);
      } finally {
        ingesting = false;
      }
    })();
    // Transactions that read, then write, all along: the kind a deferred BEGIN lets fail with
    // SQLITE_BUSY when the other connection commits in between (on either side).
    let written = 0;
    while (ingesting) {
      await store.patients.ensure(account.id, `API-${written++}`);
      // A turn of the event loop, for the worker's replies (better-sqlite3 never yields one).
      await new Promise((resolve) => setImmediate(resolve));
    }
    await ingest;
    expect(written).toBeGreaterThan(0);
    expect((await store.patients.list(account.id, { count: true })).total).toBe(
      senders.length + written,
    );
  });

  it("fails to start with E_STORE_UNAVAILABLE when it cannot open the store", async () => {
    const processor = new WorkerProcessor({
      storeSpec: `sqlite:${join(dir, "not-a-dir.db", "lab.db")}`,
      catalogue,
      clock,
    });
    rmSync(dir, { recursive: true, force: true });
    // A file where the store's folder should be.
    const { writeFileSync, mkdirSync } = await import("node:fs");
    mkdirSync(dir);
    writeFileSync(join(dir, "not-a-dir.db"), "");
    await expect(processor.start()).rejects.toMatchObject({ code: "E_STORE_UNAVAILABLE" });
    await processor.stop();
  });

  it("carries error codes across the thread boundary", () => {
    const error = new RpmlabError("E_STORE_UNAVAILABLE", "database is locked", { store: "x" });
    const back = fromWire(structuredClone(toWire(error)));
    expect(back).toBeInstanceOf(RpmlabError);
    expect(back).toMatchObject({ code: "E_STORE_UNAVAILABLE", message: "database is locked" });
    expect((back as RpmlabError).details).toEqual({ store: "x" });
    const plain = fromWire(structuredClone(toWire(new TypeError("boom"))));
    expect(plain).toMatchObject({ name: "TypeError", message: "boom" });
  });
});
