/**
 * [MQTT-4.3.2-2] The ingestion core acknowledges a message only once the store committed it:
 * what is not committed is redelivered to the persistent session; batches commit in order; a
 * store outage delays, never loses; a message the store refuses ends as a dead letter.
 */
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/core/logger.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import type { Store, StoreRepositories } from "../../src/store/store.ts";
import { within } from "../mqtt/helpers.ts";
import {
  catalogue,
  checkinPayload,
  memoryStore,
  readingsOf,
  type Sender,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";
import { IngestLab, Outcomes, storeWith, unavailable } from "./harness.ts";

const gw = senderFor(catalogue.get("Vendor Pulse Ox"), 4);

describe("acknowledgement after commit", () => {
  let store: Store;
  let clock: VirtualClock;
  let lab: IngestLab;

  beforeEach(async () => {
    ({ store, clock } = await memoryStore());
    lab = new IngestLab(store, clock);
    await lab.start();
  });
  afterEach(async () => {
    await lab.stop();
    await store.close();
  });

  async function publish(sender: Sender, count: number, prefix = "m") {
    const client = await lab.device("gateway", sender.hardwareUuid);
    const readings = readingsOf(sender, 10, 0);
    for (let i = 0; i < count; i++) {
      const m = uplinkMessage(sender, `${prefix}-${i}`, [readings[i % readings.length]!], i);
      await client.publishAsync(m.topic, m.payload, { qos: 1 });
    }
  }

  it("redelivers to the session what was never committed, and stores it once", async () => {
    // First ingestor: its store fails every commit, so it never acknowledges.
    let failures = 0;
    const broken = storeWith(store, () => {
      failures++;
      throw unavailable();
    });
    const first = await lab.ingestor({ store: broken });
    const failed = new Promise<number>((resolve) =>
      first.events.on("store_error", (e) => resolve(e.retryInMs)),
    );
    await first.start();
    await publish(gw, 3);
    expect(await within(failed, "the failed commit")).toBe(1000);
    expect(failures).toBeGreaterThan(0);
    // It goes away with nothing acknowledged (a crash would do the same).
    await first.stop();
    expect(
      await store.measurements.listOrphans({ hardwareUuid: gw.hardwareUuid, sensorCode: "24" }),
    ).toEqual([]);

    // The next process with the same client id resumes the session: the broker redelivers.
    const second = await lab.ingestor();
    const outcomes = new Outcomes(second);
    await second.start();
    await outcomes.count(3);
    expect(outcomes.all.map((o) => o.kind)).toEqual(["uplink", "uplink", "uplink"]);
    const rows = await store.measurements.listOrphans({
      hardwareUuid: gw.hardwareUuid,
      sensorCode: "24",
    });
    expect(new Set(rows.map((r) => r.messageId))).toEqual(new Set(["m-0", "m-1", "m-2"]));
  });

  it("takes a gateway's retained status, sent again at each subscription, as no new check-in", async () => {
    const status = (signal: number) => Buffer.from(checkinPayload(signal, clock.now()));
    const topic = topicOf("gw/status", gw.hardwareUuid);
    const first = await lab.ingestor();
    await first.start();
    const gateway = await lab.device("gateway", gw.hardwareUuid);
    await gateway.publishAsync(topic, status(21), { qos: 1, retain: true });
    await new Outcomes(first).count(1);
    const checkedIn = (await store.gateways.get(gw.hardwareUuid))!.lastCheckinTime;
    expect(checkedIn).toBe(clock.now());
    await first.stop();
    // The service restarts later: the broker sends the retained status to the new subscription.
    clock.runSync({ until: clock.now() + 3_600_000 });
    const second = await lab.ingestor();
    const outcomes = new Outcomes(second);
    await second.start();
    // A live status after it: once that is in, the retained one would have been too.
    await gateway.publishAsync(topic, status(25), { qos: 1 });
    await outcomes.count(1);
    expect(outcomes.all.map((o) => o.kind)).toEqual(["status"]);
    expect((await store.gateways.get(gw.hardwareUuid))!.lastSignalStrength).toBe(25);
  });

  it("retries a batch the store could not take once it is back, on the clock", async () => {
    let down = true;
    const flaky = storeWith(store, (tx) => {
      if (down) throw unavailable();
      return tx;
    });
    const ingestor = await lab.ingestor({ store: flaky });
    const outcomes = new Outcomes(ingestor);
    const failed = new Promise<number>((resolve) =>
      ingestor.events.on("store_error", (e) => resolve(e.retryInMs)),
    );
    await ingestor.start();
    await publish(gw, 2);
    const retryInMs = await within(failed, "the store error");
    expect(outcomes.all).toEqual([]);
    down = false;
    clock.runSync({ until: clock.now() + retryInMs });
    await outcomes.count(2);
    expect(outcomes.all.every((o) => o.kind === "uplink" && o.stored > 0)).toBe(true);
  });

  it("batches messages that arrive together, and commits and acknowledges them in order", async () => {
    const ingestor = await lab.ingestor();
    const outcomes = new Outcomes(ingestor);
    await ingestor.start();
    const client = await lab.device("gateway", gw.hardwareUuid);
    const readings = readingsOf(gw, 30, 0);
    const n = Math.min(120, readings.length);
    // Publish without waiting for each PUBACK, as a gateway draining its outbox does.
    await Promise.all(
      Array.from({ length: n }, (_, i) => {
        const m = uplinkMessage(gw, `b-${i}`, [readings[i]!], i);
        return client.publishAsync(m.topic, m.payload, { qos: 1 });
      }),
    );
    await outcomes.count(n);
    expect(outcomes.all.map((o) => (o.kind === "uplink" ? o.messageId : o.kind))).toEqual(
      Array.from({ length: n }, (_, i) => `b-${i}`),
    );
    expect(Math.max(...outcomes.batches.map((b) => b.outcomes.length))).toBeGreaterThan(1);
  });

  /** Measurements of message m-1 refused by the store (not an outage); `deadLetters` as given. */
  const refusingM1 = (tx: StoreRepositories, deadLetters = tx.deadLetters): StoreRepositories => ({
    ...tx,
    measurements: {
      ...tx.measurements,
      insertMany: (rows) =>
        rows.some((r) => r.messageId === "m-1")
          ? Promise.reject(new Error("value out of this store's range"))
          : tx.measurements.insertMany(rows),
    },
    deadLetters,
  });

  it("isolates a message the store refuses, keeps it as a dead letter, and stores the others", async () => {
    const picky = storeWith(store, (tx) => refusingM1(tx));
    const ingestor = await lab.ingestor({ store: picky });
    const outcomes = new Outcomes(ingestor);
    await ingestor.start();
    await publish(gw, 3);
    await outcomes.count(3);
    const dead = outcomes.all.filter((o) => o.kind === "dead_letter");
    expect(dead).toHaveLength(1);
    expect(dead[0]!.kind === "dead_letter" && dead[0]!.deadLetter.reason).toBe(
      "internal error: Error: value out of this store's range",
    );
    expect(outcomes.all.filter((o) => o.kind === "uplink")).toHaveLength(2);
    // Named by its message id as any other dead letter: a filter on m-1 finds it.
    const found = await store.deadLetters.list({ messageId: "m-1" });
    expect(found.rows.map((row) => row.messageId)).toEqual(["m-1"]);
  });

  it("acknowledges and logs whole a message whose dead letter the store refuses too, and goes on", async () => {
    // Not an outage (that is retried): a refusal that every redelivery would meet again.
    const refusing = storeWith(store, (tx) =>
      refusingM1(tx, {
        ...tx.deadLetters,
        add: () => Promise.reject(new Error("dead letter too large for this store")),
      }),
    );
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const ingestor = await lab.ingestor({
      store: refusing,
      logger: createLogger({ level: "error", destination }),
    });
    const outcomes = new Outcomes(ingestor);
    const refused: string[] = [];
    ingestor.events.on("message_refused", ({ topic }) => refused.push(topic));
    await ingestor.start();
    const m1 = uplinkMessage(gw, "m-1", [readingsOf(gw, 10, 0)[1]!], 1);
    await publish(gw, 3);
    // The two others are stored: the refused one holds nothing back.
    await outcomes.count(2);
    expect(outcomes.all.map((o) => o.kind === "uplink" && o.messageId)).toEqual(["m-0", "m-2"]);
    expect(refused).toEqual([m1.topic]);
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      topic: m1.topic,
      reason: "internal error: Error: value out of this store's range",
      payloadBase64: Buffer.from(m1.payload).toString("base64"),
    });
    expect((await store.deadLetters.list()).rows).toEqual([]);
  });
});
