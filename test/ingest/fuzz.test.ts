/**
 * Fuzzed uplinks never crash the ingestion core: random JSON, random bytes, mutated valid
 * envelopes (fields, characteristic bytes, topics) and schema-valid envelopes carrying random
 * values each end stored or dead-lettered with a reason — through the message handler by the
 * thousand, and a few hundred through a real broker.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MessageOutcome } from "../../src/ingest/events.ts";
import { Ingestor } from "../../src/ingest/ingestor.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import { BrokerTap } from "../../src/ingest/sources/broker-tap.ts";
import { type Broker, createBroker } from "../../src/mqtt/broker.ts";
import { connectClient, subscribeAll } from "../../src/mqtt/client.ts";
import { topicRefused } from "../../src/mqtt/embedded-broker.ts";
import { ingestFilters, topicOf } from "../../src/mqtt/topics.ts";
import type { Store } from "../../src/store/store.ts";
import { Clients, Inbox } from "../mqtt/helpers.ts";
import {
  catalogue,
  inbound,
  memoryStore,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";
import { Outcomes } from "./harness.ts";

const RUNS = 1000;

/** Valid messages of every device type, to mutate. */
const pool = catalogue.profiles.map((profile, i) => {
  const sender = senderFor(profile, i);
  const readings = readingsOf(sender, 10, 0).slice(0, 1 + (i % 3));
  return uplinkMessage(sender, `seed-${i}`, readings);
});

const topics = fc.oneof(
  fc.constantFrom(...pool.map((m) => m.topic)),
  fc.constantFrom(topicOf("gw/status", "297056120BD7"), topicOf("gw/down", "297056120BD7")),
  fc.string({ maxLength: 40 }).map((s) => `rpm/v1/gw/${s}/up`),
  fc.string({ maxLength: 60 }),
);

type ValueOf<A> = A extends fc.Arbitrary<infer T> ? T : never;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every (container, key) of a JSON value, depth first. */
function slots(value: Json, out: [Json[] | { [k: string]: Json }, string | number][] = []) {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      out.push([value, i]);
      slots(v, out);
    }
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      out.push([value, k]);
      slots(v, out);
    }
  }
  return out;
}

const fieldMutation = fc.record({
  base: fc.nat(),
  pick: fc.nat(),
  action: fc.constantFrom("replace", "delete", "add"),
  value: fc.jsonValue(),
});

function mutateField(m: ValueOf<typeof fieldMutation>): { topic: string; payload: Buffer } {
  const base = pool[m.base % pool.length]!;
  const json = JSON.parse(base.payload.toString()) as Json;
  const all = slots(json);
  const [container, key] = all[m.pick % all.length]!;
  const c = container as Record<string | number, Json>;
  if (m.action === "replace") c[key] = m.value as Json;
  else if (m.action === "delete") delete c[key];
  else if (!Array.isArray(container)) c[`extra_${key}`] = m.value as Json;
  else (container as Json[]).push(m.value as Json);
  return { topic: base.topic, payload: Buffer.from(JSON.stringify(json)) };
}

const byteMutation = fc.record({
  base: fc.nat(),
  reading: fc.nat(),
  value: fc.nat(),
  kind: fc.constantFrom("flip", "truncate", "extend", "random"),
  at: fc.nat(),
  byte: fc.integer({ min: 0, max: 255 }),
  bytes: fc.uint8Array({ maxLength: 40 }),
});

function mutateBytes(m: ValueOf<typeof byteMutation>): { topic: string; payload: Buffer } {
  const base = pool[m.base % pool.length]!;
  const json = JSON.parse(base.payload.toString());
  const reading = json.readings[m.reading % json.readings.length];
  const value = reading.values[m.value % reading.values.length];
  const bytes = [...Buffer.from(value.value_b64, "base64")];
  const at = bytes.length === 0 ? 0 : m.at % bytes.length;
  if (m.kind === "flip") bytes[at] = (bytes[at] ?? 0) ^ (m.byte || 1);
  else if (m.kind === "truncate") bytes.length = at;
  else if (m.kind === "extend") bytes.push(...m.bytes, m.byte);
  else bytes.splice(0, bytes.length, ...m.bytes);
  value.value_b64 = Buffer.from(bytes).toString("base64");
  return { topic: base.topic, payload: Buffer.from(JSON.stringify(json)) };
}

/** Envelopes that pass the schema with random characteristic values: the codecs' turn. */
const schemaValid = fc
  .record({
    base: fc.nat(),
    uuids: fc.array(
      fc.constantFrom(
        "2A35",
        "2A19",
        "2A9D",
        "2A18",
        "2A34",
        "2A5E",
        "2A5F",
        "7e3a0002-8c4d-4f6b-9a21-5d2c1b0e4f60",
        "7e3a0003-8c4d-4f6b-9a21-5d2c1b0e4f60",
        "180F",
      ),
      { minLength: 1, maxLength: 4 },
    ),
    values: fc.array(fc.uint8Array({ maxLength: 30 }), { minLength: 4, maxLength: 4 }),
  })
  .map((m) => {
    const base = pool[m.base % pool.length]!;
    const json = JSON.parse(base.payload.toString());
    json.readings[0].values = m.uuids.map((uuid, i) => ({
      uuid,
      value_b64: Buffer.from(m.values[i]!).toString("base64"),
    }));
    return { topic: base.topic, payload: Buffer.from(JSON.stringify(json)) };
  });

const message = fc.oneof(
  fc.record({ topic: topics, payload: fc.json().map((j) => Buffer.from(j)) }),
  fc.record({
    topic: topics,
    payload: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  }),
  fieldMutation.map(mutateField),
  byteMutation.map(mutateBytes),
  schemaValid,
);

/** "Stored or dead-lettered": every outcome accounts for its message. */
function landed(outcome: MessageOutcome | undefined): boolean {
  if (outcome === undefined) return false;
  switch (outcome.kind) {
    case "uplink":
      return outcome.stored + outcome.duplicates > 0 || outcome.deadLetter !== null;
    case "dead_letter":
      return outcome.deadLetter.reason.length > 0;
    default:
      return true;
  }
}

describe("fuzzed uplinks through the message handler", () => {
  let store: Store;
  let processor: MessageProcessor;

  beforeAll(async () => {
    ({ store } = await memoryStore());
    processor = new MessageProcessor({ store, catalogue });
  });
  afterAll(() => store.close());

  it(`never throw; each lands stored or dead-lettered (${5 * RUNS} cases)`, async () => {
    const kinds = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(message, async (m) => {
        const result = await processor.process([inbound(m)]);
        expect(result.outcomes).toHaveLength(1);
        const outcome = result.outcomes[0];
        expect(landed(outcome), JSON.stringify(outcome)).toBe(true);
        const k = outcome!.kind === "uplink" && outcome!.deadLetter ? "uplink+dead" : outcome!.kind;
        kinds.set(k, (kinds.get(k) ?? 0) + 1);
      }),
      { numRuns: 5 * RUNS, seed: 20260101 },
    );
    // The fuzzer reached every path: stored, dead-lettered whole, and in part.
    expect([...kinds.keys()]).toEqual(
      expect.arrayContaining(["uplink", "dead_letter", "uplink+dead"]),
    );
  }, 120_000);
});

describe("fuzzed uplinks through a real broker", () => {
  let store: Store;
  let broker: Broker;
  let ingestor: Ingestor;
  const clients = new Clients();

  beforeAll(async () => {
    const opened = await memoryStore();
    store = opened.store;
    // No ACL here: the fuzzer publishes on any topic, as a misbehaving client might.
    broker = createBroker("embedded:0");
    await broker.start();
    // Through the broker's tap, as `rpmlab serve` ingests from its embedded broker.
    ingestor = new Ingestor({
      source: BrokerTap.of(broker)!,
      store,
      catalogue,
      clock: opened.clock,
    });
    await ingestor.start();
  });
  afterAll(async () => {
    await ingestor.stop();
    await clients.endAll();
    await broker.stop();
    await store.close();
  });

  it("survives a few hundred fuzzed messages and still ingests a valid one", async () => {
    const outcomes = new Outcomes(ingestor);
    const samples = fc.sample(message, { numRuns: 400, seed: 7 });
    const client = clients.add(
      await connectClient(broker.url, { clientId: "fuzzer", clean: true }),
    );
    // What the broker routes to the ingestion core's filters, seen by a plain subscriber.
    const watcher = clients.add(
      await connectClient(broker.url, { clientId: "watch", clean: true }),
    );
    const routed = new Inbox(watcher);
    await subscribeAll(watcher, ingestFilters(null));
    for (const m of samples) {
      // MQTT refuses wildcards, empty and NUL-bearing topics at the client; the embedded
      // broker drops a client that publishes to $SYS/ or to a topic with an empty level.
      const unpublishable = m.topic === "" || /[+#]/.test(m.topic) || m.topic.includes("\0");
      if (unpublishable || topicRefused(m.topic) !== null) continue;
      await client.publishAsync(m.topic, m.payload, { qos: 1 });
    }
    const sender = senderFor(catalogue.profiles[0]!, 0);
    const valid = uplinkMessage(sender, "after-the-fuzz", readingsOf(sender, 10, 0).slice(5, 6));
    await client.publishAsync(valid.topic, valid.payload, { qos: 1 });
    await routed.until((m) => m.at(-1)?.topic === valid.topic, "the valid message");
    expect(routed.messages.length).toBeGreaterThan(200);
    await outcomes.count(routed.messages.length);
    expect(outcomes.all).toHaveLength(routed.messages.length);
    expect(outcomes.all.every(landed)).toBe(true);
    expect(outcomes.all.at(-1)).toMatchObject({ kind: "uplink", messageId: "after-the-fuzz" });
  });
});
