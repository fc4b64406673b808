/**
 * Ingestion through the embedded broker's tap (src/ingest/sources/broker-tap.ts), as `rpmlab
 * serve` runs it: a gateway's PUBACK means its reading is committed. Until then the gateway keeps
 * it; a store outage delays the PUBACK, a stop refuses the message so the gateway sends it again;
 * the broker's ACL still decides first.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import type { Store } from "../../src/store/store.ts";
import { within } from "../mqtt/helpers.ts";
import { catalogue, memoryStore, readingsOf, senderFor, uplinkMessage } from "./fixtures.ts";
import { IngestLab, Outcomes, storeWith, unavailable } from "./harness.ts";

const gw = senderFor(catalogue.get("Vendor Pulse Ox"), 4);
const other = senderFor(catalogue.get("Vendor Pulse Ox"), 5);

/**
 * Whether `promise` has settled after a few event-loop turns: enough for a PUBACK the broker
 * already wrote to reach the client over loopback.
 */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return done;
}

const storedFor = (store: Store, sender: typeof gw) =>
  store.measurements.listOrphans({ hardwareUuid: sender.hardwareUuid, sensorCode: "24" });

describe("ingestion through the embedded broker's tap", () => {
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

  it("acknowledges a reading to its gateway only once it is committed", async () => {
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let reached: () => void = () => {};
    const atStore = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const gated: Store = {
      ...store,
      transaction: (fn) => {
        reached();
        return gate.then(() => store.transaction(fn));
      },
    };
    const ingestor = await lab.ingestor({ via: "tap", store: gated });
    const outcomes = new Outcomes(ingestor);
    await ingestor.start();
    const client = await lab.device("gateway", gw.hardwareUuid);
    const m = uplinkMessage(gw, "m-1", readingsOf(gw, 3, 0).slice(0, 1));
    const puback = client.publishAsync(m.topic, m.payload, { qos: 1 });
    // The broker handed it over and its batch waits at the store: no PUBACK yet.
    await within(atStore, "the batch at the store");
    expect(await settled(puback)).toBe(false);
    expect(await storedFor(store, gw)).toEqual([]);
    open();
    await within(puback, "the PUBACK after the commit");
    expect((await storedFor(store, gw)).length).toBeGreaterThan(0);
    await outcomes.count(1);
  });

  it("holds PUBACKs through a store outage, then stores every reading once", async () => {
    let down = true;
    const flaky = storeWith(store, (tx) => {
      if (down) throw unavailable();
      return tx;
    });
    const ingestor = await lab.ingestor({ via: "tap", store: flaky });
    const failed = new Promise<number>((resolve) =>
      ingestor.events.on("store_error", (e) => resolve(e.retryInMs)),
    );
    await ingestor.start();
    const client = await lab.device("gateway", gw.hardwareUuid);
    const readings = readingsOf(gw, 3, 0);
    const pubacks = [0, 1].map((i) => {
      const m = uplinkMessage(gw, `m-${i}`, [readings[i]!], i);
      return client.publishAsync(m.topic, m.payload, { qos: 1 });
    });
    const retryInMs = await within(failed, "the store error");
    expect(await settled(Promise.all(pubacks))).toBe(false);
    down = false;
    clock.runSync({ until: clock.now() + retryInMs });
    await within(Promise.all(pubacks), "the PUBACKs once the store is back");
    const rows = await storedFor(store, gw);
    expect(new Set(rows.map((r) => r.messageId))).toEqual(new Set(["m-0", "m-1"]));
  });

  it("refuses what it could not commit before stopping; the gateway sends it again", async () => {
    const broken = storeWith(store, () => {
      throw unavailable();
    });
    const first = await lab.ingestor({ via: "tap", store: broken });
    const failed = new Promise<void>((resolve) => first.events.on("store_error", () => resolve()));
    await first.start();
    // A gateway on a persistent session, reconnecting at once, as a real one retries.
    const client = await lab.device("gateway", gw.hardwareUuid, {
      clean: false,
      reconnectPeriod: 20,
    });
    const m = uplinkMessage(gw, "m-1", readingsOf(gw, 3, 0).slice(0, 1));
    const puback = client.publishAsync(m.topic, m.payload, { qos: 1 });
    await within(failed, "the store error");
    const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
    await first.stop();
    // [MQTT-3.3.5-2] the broker refuses it by closing the connection: no PUBACK came.
    await within(closed, "the refused connection");
    expect(await storedFor(store, gw)).toEqual([]);

    const second = await lab.ingestor({ via: "tap" });
    const outcomes = new Outcomes(second);
    await second.start();
    await within(puback, "the PUBACK of the message sent again");
    await outcomes.count(1);
    const rows = await storedFor(store, gw);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.messageId === "m-1")).toBe(true);
  });

  it("takes status and last will too, and only what the ACL lets through", async () => {
    const ingestor = await lab.ingestor({ via: "tap" });
    const outcomes = new Outcomes(ingestor);
    await ingestor.start();
    const client = await lab.device("gateway", gw.hardwareUuid, {
      will: {
        topic: topicOf("gw/status", gw.hardwareUuid),
        payload: Buffer.from(JSON.stringify({ v: 1, online: false })),
        qos: 1,
        retain: true,
      },
    });
    // Under another gateway's topic: the ACL refuses it before the tap sees it.
    const stolen = uplinkMessage(other, "x-1", readingsOf(other, 3, 0).slice(0, 1));
    const refused = new Promise<void>((resolve) => client.once("close", () => resolve()));
    client.publish(stolen.topic, stolen.payload, { qos: 1 });
    await within(refused, "the refused publish");
    expect(await storedFor(store, other)).toEqual([]);
    // Its connection died without a DISCONNECT: the broker published its last will.
    await outcomes.count(1);

    const again = await lab.device("gateway", gw.hardwareUuid, {
      will: {
        topic: topicOf("gw/status", gw.hardwareUuid),
        payload: Buffer.from(JSON.stringify({ v: 1, online: false })),
        qos: 1,
        retain: true,
      },
    });
    const status = {
      v: 1,
      online: true,
      signal_strength: 21,
      firmware_version: "2.1.0",
      bootloader_version: "1.0.3",
      provisioned: true,
      checkin_at: "2026-03-02T08:00:00Z",
    };
    await again.publishAsync(
      topicOf("gw/status", gw.hardwareUuid),
      Buffer.from(JSON.stringify(status)),
      { qos: 1, retain: true },
    );
    expect((await store.gateways.get(gw.hardwareUuid))?.lastSignalStrength).toBe(21);
    // The connection dies without a DISCONNECT: the broker publishes the last will.
    again.stream.destroy();
    await outcomes.count(3);
    expect(outcomes.all.map((o) => o.kind)).toEqual(["status", "status", "status"]);
    expect((await store.gateways.get(gw.hardwareUuid))?.lastSignalStrength).toBe(0);
    expect(ingestor.pending).toBe(0);
  });
});
