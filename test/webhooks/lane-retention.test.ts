import { afterEach, describe, expect, it, vi } from "vitest";
import type { LaneRoom } from "../../src/webhooks/dispatch-store.ts";
import { StoreDispatch } from "../../src/webhooks/dispatch-store.ts";
import { RecordSender } from "../../src/webhooks/record-sender.ts";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import { HOUR, WebhookLab } from "./harness.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);

/**
 * A long `serve` whose users come and go (a CI job registering a receiver on a fresh port per
 * run, then deleting it) must not keep a lane per endpoint it ever posted to: every round hands
 * the lanes' room to the store side (across to the dispatch worker on a SQLite file).
 */
describe("the dispatcher's endpoint lanes", () => {
  let lab: WebhookLab | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await lab?.close();
    lab = undefined;
  });

  it("are forgotten once their endpoints are idle, not kept for every endpoint ever used", async () => {
    lab = await WebhookLab.open({ sender: new RecordSender() });
    await lab.device(bpm, "P-1");
    const readings = readingsOf(bpm, 30, 0);
    const ENDPOINTS = 40;
    for (let i = 0; i < ENDPOINTS; i++) {
      const webhook = await lab.webhook({ endpoint: `http://receiver-${i}.test:8080/hook` });
      expect(await lab.ingest(bpm, [readings[i]!])).toBeGreaterThan(0);
      await lab.settle();
      await lab.store.webhooks.delete(lab.account.id, webhook.id);
    }
    const deliveries = await lab.deliveries();
    expect(deliveries.length).toBeGreaterThanOrEqual(ENDPOINTS);
    expect(deliveries.every((d) => d.state === "delivered")).toBe(true);

    // Hours on: the endpoints have had nothing to do all that time.
    await lab.runUntil(lab.clock.now() + 3 * HOUR);
    const rooms: LaneRoom[] = [];
    const expand = StoreDispatch.prototype.expand;
    vi.spyOn(StoreDispatch.prototype, "expand").mockImplementation(function (
      this: StoreDispatch,
      room,
      now,
      until,
    ) {
      rooms.push(room);
      return expand.call(this, room, now, until);
    });
    lab.dispatcher.nudge();
    await lab.settle();
    expect(rooms.length).toBeGreaterThan(0);
    expect(Object.keys(rooms.at(-1)!.lanes)).toEqual([]);
  });
});
