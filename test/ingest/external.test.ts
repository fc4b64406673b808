/**
 * Ingestion as it runs against an external broker: two ingest processes in one shared
 * subscription group on the local Mosquitto split the uplinks and write one PostgreSQL store,
 * storing every reading once (DESIGN.md "Testing": Mosquitto and PostgreSQL run on CI).
 */
import { afterAll, describe, expect, it } from "vitest";
import { SystemClock } from "../../src/core/clock.ts";
import { Rng } from "../../src/core/rng.ts";
import type { MessageOutcome } from "../../src/ingest/events.ts";
import { Ingestor } from "../../src/ingest/ingestor.ts";
import { MqttSubscription } from "../../src/ingest/sources/subscription.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { openStore } from "../../src/store/open.ts";
import { Clients, hexId, imeiId, within } from "../mqtt/helpers.ts";
import { mosquittoOrSkip } from "../support/mosquitto.ts";
import { postgresHarness } from "../support/postgres.ts";
import {
  asRecord,
  catalogue,
  expectedRecords,
  readingsOf,
  type Sender,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";

const SUITE = "Ingestion over Mosquitto into PostgreSQL";
const MQTT_URL = await mosquittoOrSkip(SUITE);

if (MQTT_URL !== undefined) {
  const pgh = await postgresHarness(SUITE);
  if (pgh !== undefined) {
    afterAll(() => pgh.close());

    describe(SUITE, () => {
      it("splits the load between two ingest processes and stores every reading once", async () => {
        // Retries after a deadlock between the two writers wait on this clock: real time.
        const clock = new SystemClock();
        const { spec } = pgh.nextSpec();
        const store = await pgh.locked(() => openStore(spec, { clock, rng: new Rng("ext") }));
        const clients = new Clients();
        const run = hexId(6).toLowerCase();
        const ingestors = ["a", "b"].map(
          (x) =>
            new Ingestor({
              source: new MqttSubscription({
                url: MQTT_URL,
                clientId: `rpmlab-ingest-${run}-${x}`,
                sharedGroup: `rpmlab-ingest-${run}`,
              }),
              store,
              catalogue,
              clock,
            }),
        );
        const outcomes: MessageOutcome[][] = [[], []];
        for (const [i, ingestor] of ingestors.entries()) {
          ingestor.events.on("batch", (b) => {
            // Retained gateway statuses that other clients of a shared broker left arrive too:
            // this test publishes uplinks only.
            outcomes[i]!.push(...b.outcomes.filter((o) => o.kind !== "status"));
          });
        }
        try {
          for (const ingestor of ingestors) await ingestor.start();
          // Fresh ids per run: Mosquitto keeps sessions and retained messages between runs.
          const senders: Sender[] = catalogue.profiles.map((profile, i) => {
            const base = senderFor(profile, i);
            const id = profile.connectivity === "cellular" ? imeiId() : hexId(12);
            return {
              ...base,
              hardwareUuid: id,
              source: profile.connectivity === "cellular" ? id : base.source,
            };
          });
          const publisher = clients.add(
            await connectClient(MQTT_URL, { clientId: `rpmlab-test-${run}`, clean: true }),
          );
          const generated = new Map<Sender, ReturnType<typeof readingsOf>>();
          let published = 0;
          for (const sender of senders) {
            const readings = readingsOf(sender, 5).slice(0, 12);
            generated.set(sender, readings);
            for (let start = 0; start < readings.length; start += 3) {
              const m = uplinkMessage(
                sender,
                `m-${start}`,
                readings.slice(start, start + 3),
                start,
              );
              await publisher.publishAsync(m.topic, m.payload, { qos: 1 });
              published++;
              if (start === 0) {
                await publisher.publishAsync(m.topic, m.payload, { qos: 1 });
                published++;
              }
            }
          }
          const total = () => outcomes[0]!.length + outcomes[1]!.length;
          await within(
            new Promise<void>((resolve) => {
              const check = () => {
                if (total() >= published) resolve();
              };
              for (const ingestor of ingestors) ingestor.events.on("batch", check);
              check();
            }),
            `${published} messages ingested`,
            30_000,
          );
          const all = outcomes.flat();
          expect(all).toHaveLength(published);
          expect(outcomes.every((o) => o.length > 0)).toBe(true);
          expect(all.filter((o) => o.kind === "redelivered")).toHaveLength(senders.length);
          expect(
            all.filter((o) => o.kind === "dead_letter" || (o.kind === "uplink" && o.deadLetter)),
          ).toEqual([]);
          for (const sender of senders) {
            const rows = await store.measurements.listOrphans({
              hardwareUuid: sender.hardwareUuid,
              sensorCode: sender.profile.sensor_code,
            });
            const key = (r: { timestamp: number; metric: string }) => `${r.timestamp}/${r.metric}`;
            expect(
              rows.map(asRecord).sort((a, b) => key(a).localeCompare(key(b))),
              sender.profile.name,
            ).toEqual(
              expectedRecords(generated.get(sender)!).sort((a, b) => key(a).localeCompare(key(b))),
            );
          }
        } finally {
          for (const ingestor of ingestors) await ingestor.stop();
          await clients.endAll();
          // Leave no persistent session behind on the shared broker.
          for (const ingestor of ["a", "b"]) {
            const c = await connectClient(MQTT_URL, {
              clientId: `rpmlab-ingest-${run}-${ingestor}`,
              clean: true,
            });
            await c.endAsync();
          }
          await store.close();
          clock.dispose();
        }
      }, 60_000);
    });
  }
}
