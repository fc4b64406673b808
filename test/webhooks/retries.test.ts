import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GIVE_UP_AFTER_MS, JITTER, nominalDelay } from "../../src/webhooks/retry-policy.ts";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import type { MeasurementRecordBody } from "./consumer-schema.ts";
import { expectConsumable, HOUR, START, WebhookLab } from "./harness.ts";
import { type Received, Receiver } from "./receiver.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
const delivery = (r: Received) => r.headers["x-rpmlab-delivery"] as string;
const attemptNo = (r: Received) => Number(r.headers["x-rpmlab-attempt"]);

/** Spec 6.1: measurement webhooks retried with backoff; the other kinds are not. */
describe("webhook retries", () => {
  let lab: WebhookLab;
  let receiver: Receiver;
  beforeEach(async () => {
    lab = await WebhookLab.open();
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await lab.close();
    await receiver.close();
  });

  it("a receiver down for two virtual hours gets every measurement webhook when it is back; repeats carry the same delivery id; fulfilment webhooks are not retried", async () => {
    const measurements = await lab.webhook({ endpoint: receiver.url("/m") });
    await lab.webhook({ endpoint: receiver.url("/f"), event: "FULFILLMENT" });
    const up = START + 2 * HOUR;
    // Down: the connection is dropped without an answer, as by a crashed server.
    receiver.behaviour = () => (lab.clock.now() < up ? { destroy: true } : { status: 204 });
    await lab.device(bpm, "P-1");
    const readings = readingsOf(bpm, 5, 0).slice(0, 3);
    const stored = await lab.ingest(bpm, readings);
    // An unlink while the receiver is down: its Unlinked webhook is attempted once.
    await lab.devices.unlink.unlink(lab.account.id, bpm.hardwareUuid);
    await lab.settle();
    expect(receiver.accepted).toEqual([]);
    expect(receiver.seen.filter((r) => r.path === "/f")).toHaveLength(1);

    await lab.runUntil(START + 5 * HOUR);

    const posts = receiver.seen.filter((r) => r.path === "/m");
    const ids = new Set(posts.map(delivery));
    expect(ids.size).toBe(stored);
    const ok = receiver.received.filter((r) => r.path === "/m");
    const records = expectConsumable(ok, measurements) as MeasurementRecordBody[];
    expect(new Set(ok.map(delivery))).toEqual(ids);
    expect(records).toHaveLength(stored);
    expect(new Set(records.map((r) => `${r.metric}/${r.timestamp}`)).size).toBe(stored);
    // Every attempt of a delivery carries its id and the same body; attempts count up.
    for (const id of ids) {
      const attempts = posts.filter((r) => delivery(r) === id);
      expect(attempts.length).toBeGreaterThan(5);
      expect(new Set(attempts.map((r) => r.body)).size).toBe(1);
      expect(attempts.map(attemptNo)).toEqual(attempts.map((_, i) => i + 1));
    }
    const rows = await lab.deliveries();
    const byEvent = (event: string) => rows.filter((d) => d.event === event);
    expect(byEvent("MEASUREMENT").every((d) => d.state === "delivered")).toBe(true);
    const [unlinked] = byEvent("FULFILLMENT");
    expect(unlinked).toMatchObject({ state: "not_retried", attempts: 1 });
    // The fulfilment webhook was never sent again, not even once the receiver was back.
    expect(receiver.seen.filter((r) => r.path === "/f")).toHaveLength(1);

    // The waits follow the documented schedule: doubling from 15 s, ±20 % jitter.
    const log = await lab.store.webhookDeliveries.attempts([...ids][0]!);
    for (let n = 1; n < log.length; n++) {
      const wait = log[n]!.at - log[n - 1]!.at;
      expect(wait).toBeGreaterThanOrEqual(nominalDelay(n) * (1 - JITTER) - 1);
      expect(wait).toBeLessThanOrEqual(nominalDelay(n) * (1 + JITTER) + 1);
    }
    expect(log.at(-1)!.at).toBeGreaterThanOrEqual(up);
    expect(log.at(-2)!.at).toBeLessThan(up);
  });

  it("gives up 24 hours after creation and keeps the delivery as failed, with every attempt logged", async () => {
    await lab.webhook({ endpoint: receiver.url("/m") });
    receiver.behaviour = () => ({ status: 503, body: "maintenance" });
    await lab.device(bpm, "P-1");
    await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
    await lab.runUntil(START + 30 * HOUR);
    const [first] = await lab.deliveries();
    expect(first!.state).toBe("failed");
    expect(first!.nextAttemptAt).toBeNull();
    const log = await lab.store.webhookDeliveries.attempts(first!.id);
    expect(log.length).toBe(first!.attempts);
    // Doubling to an hour takes 9 attempts; then hourly until 24 hours after creation.
    expect(log.length).toBeGreaterThanOrEqual(28);
    expect(log.length).toBeLessThanOrEqual(36);
    // Retried until 24 hours after creation: the last attempt at that mark, none skipped before.
    expect(log.at(-1)!.at - first!.created).toBe(GIVE_UP_AFTER_MS);
    expect(log.at(-1)!).toMatchObject({ statusCode: 503, responseSnippet: "maintenance" });
    const count = receiver.seen.length;
    await lab.runUntil(START + 40 * HOUR);
    expect(receiver.seen.length).toBe(count);
  });

  it("a measurement webhook made another kind while its deliveries wait for a retry posts them no more", async () => {
    const hook = await lab.webhook({ endpoint: receiver.url("/m") });
    const up = START + HOUR;
    receiver.behaviour = () => (lab.clock.now() < up ? { status: 503 } : { status: 204 });
    await lab.device(bpm, "P-1");
    const stored = await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 2));
    await lab.settle();
    // The client points the endpoint at its fulfilment handler meanwhile (PATCH event).
    const patched = await lab.hwi("PATCH", `webhooks/${hook.id}/`, { event: "FULFILLMENT" });
    expect(patched.statusCode, patched.body).toBe(200);
    await lab.runUntil(START + 3 * HOUR);

    // A strict FULFILLMENT consumer never gets a measurement record.
    expect(receiver.accepted).toEqual([]);
    const rows = await lab.deliveries();
    expect(rows).toHaveLength(stored);
    for (const row of rows) {
      expect(row.state).toBe("failed");
      const log = await lab.store.webhookDeliveries.attempts(row.id);
      expect(log.at(-1)).toMatchObject({
        statusCode: null,
        error: "the webhook now takes FULFILLMENT events, not MEASUREMENT",
      });
    }
  });

  it("honours a Retry-After longer than the backoff", async () => {
    await lab.webhook({ endpoint: receiver.url("/m") });
    let answered = 0;
    receiver.behaviour = () =>
      answered++ === 0
        ? { status: 429, body: "slow down", headers: { "retry-after": "600" } }
        : { status: 200 };
    await lab.device(bpm, "P-1");
    await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
    await lab.runUntil(START + HOUR);
    const [one] = (await lab.deliveries()).filter((d) => d.attempts === 2);
    const log = await lab.store.webhookDeliveries.attempts(one!.id);
    expect(log[1]!.at - log[0]!.at).toBeGreaterThanOrEqual(600_000);
  });

  it("counts a Retry-After date from the answer's own Date, not the lab's virtual clock", async () => {
    await lab.webhook({ endpoint: receiver.url("/m") });
    let answered = 0;
    // Ten minutes apart on the server's clock, which is years from the lab's (START).
    const date = "Sun, 06 Nov 1994 08:49:37 GMT";
    const retryAfter = "Sun, 06 Nov 1994 08:59:37 GMT";
    receiver.behaviour = () =>
      answered++ === 0
        ? { status: 503, headers: { date, "retry-after": retryAfter } }
        : { status: 200 };
    await lab.device(bpm, "P-1");
    await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
    await lab.runUntil(START + HOUR);
    const [one] = (await lab.deliveries()).filter((d) => d.attempts === 2);
    const log = await lab.store.webhookDeliveries.attempts(one!.id);
    const waited = log[1]!.at - log[0]!.at;
    expect(waited).toBeGreaterThanOrEqual(600_000);
    expect(waited).toBeLessThan(660_000);
  });
});
