import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import type { Store } from "../../src/store/store.ts";
import { type LaneRoom, StoreDispatch } from "../../src/webhooks/dispatch-store.ts";
import { WebhookDispatcher } from "../../src/webhooks/dispatcher.ts";
import { RecordSender } from "../../src/webhooks/record-sender.ts";
import { StatusMetrics } from "../../src/webhooks/status-metrics.ts";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import { HOUR, WebhookLab } from "./harness.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);

/** The dispatcher's store side, running `meanwhile` after each expansion's read and write. */
class HeldExpansions extends StoreDispatch {
  constructor(
    store: Store,
    statusMetrics: StatusMetrics,
    private readonly meanwhile: () => Promise<void> | undefined,
  ) {
    super(store, statusMetrics);
  }

  override async expand(room: LaneRoom, now: number, until: number) {
    const result = await super.expand(room, now, until);
    await this.meanwhile();
    return result;
  }
}

/**
 * A nudge is the dispatcher's only news of an outbox entry until the next poll (an hour here):
 * one that arrives while the dispatcher is expanding the previous entries must not be lost.
 * That happened when ingestion committed its next batch after the expansion's read of the
 * outbox and before its answer, which then said "nothing more" over the nudge.
 */
describe("a nudge during an expansion", () => {
  let lab: WebhookLab;
  let sender: RecordSender;
  let dispatcher: WebhookDispatcher;
  let paused: (() => Promise<void>) | undefined;

  beforeEach(async () => {
    lab = await WebhookLab.open();
    // The lab's own dispatcher (which lab.ingest nudges) stays stopped: this one replaces it.
    await lab.dispatcher.stop();
    sender = new RecordSender();
    dispatcher = new WebhookDispatcher({
      store: new HeldExpansions(lab.store, new StatusMetrics(catalogue), () => {
        const during = paused;
        paused = undefined;
        return during?.();
      }),
      clock: lab.clock,
      rng: new Rng("nudge"),
      sender,
      config: { timeoutMs: 2000, concurrency: 4 },
      pollMs: HOUR,
    });
    dispatcher.start();
    await dispatcher.idle();
  });
  afterEach(async () => {
    await dispatcher.stop();
    await lab.close();
  });

  it("is answered by another expansion: readings stored meanwhile are sent without a poll", async () => {
    await lab.webhook({ endpoint: "http://127.0.0.1:9/m", postAsArray: true });
    await lab.device(bpm, "P-1");
    const [first, second] = readingsOf(bpm, 5, 0);
    // While the first entry's expansion is between its read and its answer, the next batch
    // commits and nudges, as ingestion's `batch` event does in serve.
    paused = async () => {
      await lab.ingest(bpm, [second!]);
      dispatcher.nudge();
    };
    await lab.ingest(bpm, [first!]);
    dispatcher.nudge();
    await dispatcher.idle();

    expect(paused).toBeUndefined();
    expect(await lab.store.webhookOutbox.count()).toBe(0);
    expect(sender.requests).toHaveLength(2);
    expect((await lab.deliveries()).every((d) => d.state === "delivered")).toBe(true);
  });
});
