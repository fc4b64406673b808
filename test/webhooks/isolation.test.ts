import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import { WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
const CONCURRENCY = 3;

/** Issue 4 §1: per-endpoint concurrency and timeouts; a dead endpoint never delays the others. */
describe("webhook endpoints are independent", () => {
  let lab: WebhookLab;
  let dead: Receiver;
  let alive: Receiver;
  beforeEach(async () => {
    lab = await WebhookLab.open({ config: { concurrency: CONCURRENCY, timeoutMs: 1500 } });
    dead = await Receiver.start();
    alive = await Receiver.start();
    // Takes every request and never answers.
    dead.behaviour = () => ({ hold: true });
  });
  afterEach(async () => {
    // The receivers first: a failed test can leave requests held, which a stopping dispatcher
    // would wait for on the lab's virtual clock, which does not move.
    await dead.close();
    await alive.close();
    await lab.close();
  });

  it("an endpoint that never answers holds at most its concurrency in flight and delays no one else", async () => {
    await lab.webhook({ endpoint: dead.url("/never") });
    await lab.webhook({ endpoint: alive.url("/ok") });
    await lab.device(bpm, "P-1");
    const stored = await lab.ingest(bpm, readingsOf(bpm, 10, 0).slice(0, 6));
    expect(stored).toBeGreaterThan(3 * CONCURRENCY);

    await alive.count(stored);
    // Everything reached the live endpoint while the dead one still sat on its first requests.
    expect(dead.received).toHaveLength(CONCURRENCY);
    expect(dead.inFlight).toBe(CONCURRENCY);
    expect(alive.maxInFlight).toBeLessThanOrEqual(CONCURRENCY);

    // It comes back: the rest follow, never more than CONCURRENCY at once.
    dead.behaviour = () => ({ status: 200 });
    dead.release();
    await lab.settle();
    expect(dead.received).toHaveLength(stored);
    expect(dead.maxInFlight).toBe(CONCURRENCY);
    expect((await lab.deliveries()).every((d) => d.state === "delivered")).toBe(true);
  });

  it("readings ingested batch by batch behind a dead endpoint's full queue reach a live one at once", async () => {
    // Each batch is an outbox entry; the dead endpoint's queue fills on the first, and the
    // rest wait in the outbox for it (README "Never lost"): they must not wait for the live
    // endpoint too. A timeout far past the test's deadline: nothing frees the dead queue.
    await lab.close();
    lab = await WebhookLab.open({ config: { concurrency: CONCURRENCY, timeoutMs: 120_000 } });
    await lab.webhook({ endpoint: dead.url("/never") });
    await lab.webhook({ endpoint: alive.url("/ok") });
    await lab.device(bpm, "P-1");
    let stored = 0;
    for (const reading of readingsOf(bpm, 10, 0).slice(0, 20)) {
      stored += await lab.ingest(bpm, [reading]);
    }
    await alive.count(stored);
    expect(dead.received.length).toBeLessThanOrEqual(CONCURRENCY);
    dead.behaviour = () => ({ status: 200 });
    dead.release();
    await lab.settle();
    expect(dead.received).toHaveLength(stored);
  });

  it("an attempt without an answer times out and waits for its retry", async () => {
    await lab.dispatcher.stop();
    await lab.close();
    lab = await WebhookLab.open({ config: { concurrency: CONCURRENCY, timeoutMs: 300 } });
    await lab.webhook({ endpoint: dead.url("/never") });
    await lab.device(bpm, "P-1");
    const stored = await lab.ingest(bpm, readingsOf(bpm, 10, 0).slice(0, 1));
    await lab.settle();
    const pending = await lab.deliveries();
    expect(pending).toHaveLength(stored);
    for (const d of pending) {
      expect(d).toMatchObject({ state: "pending", attempts: 1 });
      // The first retry: 15 s ± 20 %.
      expect(d.nextAttemptAt! - lab.clock.now()).toBeGreaterThanOrEqual(12_000);
      expect(d.nextAttemptAt! - lab.clock.now()).toBeLessThanOrEqual(18_000);
      const [log] = await lab.store.webhookDeliveries.attempts(d.id);
      expect(log).toMatchObject({ statusCode: null, error: "no answer within 300 ms" });
      expect(log!.latencyMs).toBeGreaterThanOrEqual(290);
    }
  });
});
