import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { openStore } from "../../src/store/open.ts";
import { StoreDispatch } from "../../src/webhooks/dispatch-store.ts";
import { WebhookDispatcher } from "../../src/webhooks/dispatcher.ts";
import { createWebhookSender } from "../../src/webhooks/sender.ts";
import { StatusMetrics } from "../../src/webhooks/status-metrics.ts";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import { POSTGRES_SHOWN, postgresHarness } from "../support/postgres.ts";
import type { MeasurementRecordBody } from "./consumer-schema.ts";
import { expectConsumable, HOUR, START, WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
const pgh = await postgresHarness("Webhook delivery on PostgreSQL");

/**
 * The dispatcher's path on PostgreSQL (jsonb outbox payloads, claims with SKIP LOCKED, numbering
 * of attempts), end to end: arrays, a receiver down for a virtual hour, and two dispatchers on
 * one database (two `rpmlab serve` on one PostgreSQL) sharing the work, none sent twice.
 */
if (pgh !== undefined) {
  afterAll(() => pgh.close());

  describe(`webhook delivery on PostgreSQL (${POSTGRES_SHOWN})`, () => {
    let lab: WebhookLab;
    let receiver: Receiver;
    let schema = "";
    let spec = "";
    beforeEach(async () => {
      const next = pgh.nextSpec();
      schema = next.schema;
      spec = next.spec;
      lab = await pgh.locked(() => WebhookLab.open({ store: next.spec }));
      receiver = await Receiver.start();
    });
    afterEach(async () => {
      await lab.close();
      await receiver.close();
      await pgh.dropSchema(schema);
    });

    it("delivers every record, arrays per reading, through a receiver that was down", async () => {
      const single = await lab.webhook({ endpoint: receiver.url("/single") });
      const arrays = await lab.webhook({ endpoint: receiver.url("/arrays"), postAsArray: true });
      receiver.behaviour = () =>
        lab.clock.now() < START + HOUR ? { status: 502 } : { status: 200 };
      await lab.device(bpm, "P-1");
      const readings = readingsOf(bpm, 5, 0).slice(0, 3);
      const stored = await lab.ingest(bpm, readings);
      await lab.runUntil(START + 4 * HOUR);
      const records = expectConsumable(
        receiver.accepted.filter((r) => r.path === "/single"),
        single,
      ) as MeasurementRecordBody[];
      expect(records).toHaveLength(stored);
      const groups = expectConsumable(
        receiver.accepted.filter((r) => r.path === "/arrays"),
        arrays,
      );
      expect(groups).toHaveLength(readings.length);
      const rows = await lab.deliveries();
      expect(rows.every((d) => d.state === "delivered" && d.attempts > 1)).toBe(true);
      const log = await lab.store.webhookDeliveries.attempts(rows[0]!.id);
      expect(log.map((a) => a.number)).toEqual(log.map((_, i) => i + 1));
    });

    it("an endpoint answering U+0000 in its body gets each record once, its answer logged", async () => {
      await lab.webhook({ endpoint: receiver.url("/nul") });
      receiver.behaviour = () => ({ status: 200, body: "ok\u0000done" });
      await lab.device(bpm, "P-1");
      const stored = await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
      await lab.runUntil(START + HOUR);
      // PostgreSQL refused the answer's text: the attempt went unlogged, the delivery stayed
      // pending and was sent again at every claim, thousands of times in the hour.
      expect(receiver.accepted).toHaveLength(stored);
      const rows = await lab.deliveries();
      expect(rows.map((d) => [d.state, d.attempts])).toEqual(rows.map(() => ["delivered", 1]));
      const log = await lab.store.webhookDeliveries.attempts(rows[0]!.id);
      expect(log).toMatchObject([{ statusCode: 200, responseSnippet: "ok\\u0000done" }]);
    });

    it("two dispatchers on one database share the outbox and the deliveries: each sent once", async () => {
      await lab.webhook({ endpoint: receiver.url("/a") });
      await lab.webhook({ endpoint: receiver.url("/b"), postAsArray: true });
      // A second process opens the same database (migrated already: nothing to apply).
      const other = await pgh.locked(() =>
        openStore(spec, { clock: lab.clock, rng: new Rng("second-process") }),
      );
      const sender = createWebhookSender("http", { timeoutMs: 2000, concurrency: 4 });
      const second = new WebhookDispatcher({
        store: new StoreDispatch(other, new StatusMetrics(catalogue)),
        clock: lab.clock,
        rng: new Rng("second-process"),
        sender,
        config: { timeoutMs: 2000, concurrency: 4 },
        pollMs: 10 * 60_000,
      });
      try {
        second.start();
        await lab.device(bpm, "P-1");
        let stored = 0;
        for (const reading of readingsOf(bpm, 20, 0).slice(0, 12)) {
          stored += await lab.ingest(bpm, [reading]);
          second.nudge();
        }
        await Promise.all([lab.settle(), second.idle()]);
        await lab.runUntil(lab.clock.now() + 60_000);
        await second.idle();
        const ids = receiver.accepted.map((r) => r.headers["x-rpmlab-delivery"]);
        expect(new Set(ids).size).toBe(ids.length);
        const rows = await lab.deliveries();
        expect(rows).toHaveLength(stored + 12);
        expect(ids).toHaveLength(rows.length);
        expect(rows.every((d) => d.state === "delivered" && d.attempts === 1)).toBe(true);
      } finally {
        await second.stop();
        await sender.close();
        await other.close();
      }
    });
  });
}
