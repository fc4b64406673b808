import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MS_PER_HOUR } from "../../src/core/time.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import { CLAIM_RETENTION_MS, claimRetention } from "../../src/ingest/claim-retention.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import type { Store } from "../../src/store/store.ts";
import {
  activateForPatient,
  catalogue,
  inbound,
  memoryStore,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);

describe("message-id claims are kept for CLAIM_RETENTION_MS, swept hourly", () => {
  let store: Store;
  let clock: VirtualClock;
  let processor: MessageProcessor;

  beforeEach(async () => {
    ({ store, clock } = await memoryStore());
    processor = new MessageProcessor({ store, catalogue });
  });
  afterEach(() => store.close());

  it("forgets a message id after the retention; the reading re-sent then is a duplicate, stored once", async () => {
    await activateForPatient(store, bpm);
    const message = uplinkMessage(bpm, "m-1", readingsOf(bpm, 3, 0).slice(0, 1));
    const first = await processor.process([inbound(message, clock.now())]);
    expect(first.stored.length).toBeGreaterThan(0);

    const sweep = claimRetention(store, clock);
    sweep.start();
    // Until the retention has passed, the id is remembered: a redelivery stores nothing.
    await clock.run({ until: clock.now() + CLAIM_RETENTION_MS - MS_PER_HOUR });
    await sweep.whenIdle();
    const early = await processor.process([inbound(message, clock.now())]);
    expect(early.outcomes).toEqual([{ kind: "redelivered", messageId: "m-1" }]);

    // The first sweep after it forgets the id; the readings are still stored once.
    await clock.run({ until: clock.now() + 2 * MS_PER_HOUR });
    await sweep.whenIdle();
    const late = await processor.process([inbound(message, clock.now())]);
    expect(late.outcomes).toEqual([
      {
        kind: "uplink",
        messageId: "m-1",
        stored: 0,
        duplicates: first.stored.length,
        deadLetter: null,
      },
    ]);
    expect(await store.measurements.count(first.stored[0]!.accountId!)).toBe(first.stored.length);
    await sweep.stop();
  });
});
