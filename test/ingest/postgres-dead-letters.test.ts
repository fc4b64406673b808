/**
 * Dead letters on PostgreSQL, whose text columns refuse U+0000: a payload or topic that puts
 * one in a dead letter's reason or topic, or a check-in reporting one in a version, is kept as
 * a dead letter naming the field, in the batch's own transaction, and never holds ingestion up.
 * Before, the store refused the dead letter (E_STORE_INVALID): the batch was rolled back and
 * retried message by message, the reason became the store's "invalid byte sequence" naming no
 * field, and a topic with U+0000 was retried for ever with every message behind it waiting.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { MessageOutcome } from "../../src/ingest/events.ts";
import { Ingestor } from "../../src/ingest/ingestor.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import { BrokerTap } from "../../src/ingest/sources/broker-tap.ts";
import { createBroker } from "../../src/mqtt/broker.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import { Clients, within } from "../mqtt/helpers.ts";
import { postgresHarness } from "../support/postgres.ts";
import {
  catalogue,
  checkinPayload,
  inbound,
  RECEIVED,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";

const SUITE = "Ingestion dead letters on PostgreSQL";
const pgh = await postgresHarness(SUITE);

if (pgh !== undefined) {
  afterAll(() => pgh.close());

  const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
  const readings = readingsOf(bpm, 4, 0);

  async function postgresStore(): Promise<{ store: Store; clock: VirtualClock }> {
    const clock = new VirtualClock({ startMs: RECEIVED });
    const { spec } = pgh!.nextSpec();
    const store = await pgh!.locked(() => openStore(spec, { clock, rng: new Rng("pg-dl") }));
    return { store, clock };
  }

  const letterOf = (outcome: MessageOutcome | undefined) =>
    outcome?.kind === "dead_letter"
      ? outcome.deadLetter
      : outcome?.kind === "uplink"
        ? outcome.deadLetter
        : null;

  describe(SUITE, () => {
    it("keeps U+0000 in a reason or topic, and refuses it in a reported version by name, in one commit", async () => {
      const { store } = await postgresStore();
      try {
        const processor = new MessageProcessor({ store, catalogue });
        const good = uplinkMessage(bpm, "good", readings.slice(0, 1));
        const envelope = JSON.parse(good.payload.toString()) as Record<string, unknown>;
        const checkin = JSON.parse(checkinPayload(20, RECEIVED)) as Record<string, unknown>;
        const messages = [
          good,
          // zod's reason quotes the unknown key, U+0000 and all.
          {
            topic: good.topic,
            payload: Buffer.from(
              JSON.stringify({ ...envelope, message_id: "good-2", "a\u0000b": 1 }),
            ),
          },
          // A broker that passes on a topic MQTT forbids ([MQTT-4.7.3-2]).
          { topic: `rpm/v1/gw/${bpm.hardwareUuid}\u0000/up`, payload: good.payload },
          {
            topic: topicOf("gw/status", bpm.hardwareUuid),
            payload: Buffer.from(JSON.stringify({ ...checkin, firmware_version: "2.4\u00001" })),
          },
        ];
        const result = await processor.process(messages.map((m) => inbound(m)));
        expect(result.outcomes[0]).toMatchObject({ kind: "uplink", stored: 3, deadLetter: null });
        const reasons = result.outcomes.slice(1).map((o) => letterOf(o)?.reason);
        expect(reasons[0]).toMatch(/^E_MQTT_PAYLOAD: .*Unrecognized key: "a\\u0000b"$/);
        expect(reasons[1]).toMatch(/^E_MQTT_TOPIC: .*level 4 "A1B2C3D4E001\\u0000"/);
        expect(reasons[2]).toMatch(/firmware_version: must be printable text/);
        const kept = await store.deadLetters.list({});
        expect(kept.rows.map((d) => d.topic)).toEqual([
          good.topic,
          `rpm/v1/gw/${bpm.hardwareUuid}\\u0000/up`,
          topicOf("gw/status", bpm.hardwareUuid),
        ]);
        // The payload bytes are kept as they came, U+0000 escapes included.
        expect(kept.rows.map((d) => Buffer.from(d.payload))).toEqual(
          messages.slice(1).map((m) => m.payload),
        );
      } finally {
        await store.close();
      }
    });

    it("acknowledges a publish to a topic holding U+0000, and ingests what follows", async () => {
      const { store, clock } = await postgresStore();
      // No ACL here, as a broker that lets any topic through; MQTT.js sends U+0000 as is.
      const broker = createBroker("embedded:0");
      await broker.start();
      const clients = new Clients();
      const ingestor = new Ingestor({ source: BrokerTap.of(broker)!, store, catalogue, clock });
      const storeErrors: unknown[] = [];
      const outcomes: MessageOutcome[] = [];
      ingestor.events.on("store_error", ({ error }) => storeErrors.push(error));
      ingestor.events.on("batch", (batch) => outcomes.push(...batch.outcomes));
      try {
        await ingestor.start();
        const client = clients.add(
          await connectClient(broker.url, { clientId: "nul-topic", clean: true }),
        );
        const good = uplinkMessage(bpm, "after", readings.slice(1, 2));
        // The tap answers the PUBACK once the batch committed: a store that refused the dead
        // letter left both publishes waiting for ever.
        await within(
          client.publishAsync(`rpm/v1/gw/${bpm.hardwareUuid}\u0000/up`, good.payload, { qos: 1 }),
          "the PUBACK of the topic holding U+0000",
        );
        await within(client.publishAsync(good.topic, good.payload, { qos: 1 }), "the next PUBACK");
        expect(storeErrors).toEqual([]);
        expect((await store.deadLetters.list({})).rows).toMatchObject([
          { topic: `rpm/v1/gw/${bpm.hardwareUuid}\\u0000/up` },
        ]);
        const after = outcomes.at(-1);
        expect(after).toMatchObject({ kind: "uplink", messageId: "after", deadLetter: null });
        expect(after?.kind === "uplink" && after.stored).toBeGreaterThan(0);
      } finally {
        await ingestor.stop();
        await clients.endAll();
        await broker.stop();
        await store.close();
      }
    });
  });
}
