import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replayDeadLetter, replayJson } from "../../src/app/dead-letters.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import { Ingestor } from "../../src/ingest/ingestor.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import { type Replay, replayWith } from "../../src/ingest/replay.ts";
import type { IngestSink, IngestSource } from "../../src/ingest/source.ts";
import type { Store, StoreRepositories } from "../../src/store/store.ts";
import { within } from "../mqtt/helpers.ts";
import {
  activateCellular,
  catalogue,
  inbound,
  memoryStore,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";
import { storeWith } from "./harness.ts";

const scale = senderFor(catalogue.get("Vendor Cellular Scale"), 3);

/** What a scale whose firmware names a type the catalogue does not know publishes. */
function unknownTypeMessage(messageId: string) {
  const message = uplinkMessage(scale, messageId, readingsOf(scale, 2, 0).slice(0, 1));
  const envelope = JSON.parse(message.payload.toString()) as { device_type: string };
  envelope.device_type = "Vendor Cellular Scale Pro";
  return { topic: message.topic, payload: Buffer.from(JSON.stringify(envelope)) };
}

describe('replaying dead letters (README "Dead letters")', () => {
  let store: Store;
  let clock: VirtualClock;
  let processor: MessageProcessor;
  let replay: Replay;

  beforeEach(async () => {
    ({ store, clock } = await memoryStore());
    processor = new MessageProcessor({ store, catalogue });
    replay = replayWith(processor, clock);
  });
  afterEach(() => store.close());

  const activateScale = () => activateCellular(store, scale);

  const all = async () => (await store.deadLetters.list()).rows;

  /**
   * An ingestor (not started) on a store that refuses to insert measurements, and `more` of its
   * repositories changed; the scale's message `messageId`, dead-lettered holding its claim.
   */
  const refusedReplay = async (
    messageId: string,
    more: (tx: StoreRepositories) => Partial<StoreRepositories>,
  ) => {
    await activateScale();
    const picky = storeWith(store, (tx) => ({
      ...tx,
      measurements: {
        ...tx.measurements,
        insertMany: () => Promise.reject(new Error("value out of this store's range")),
      },
      ...more(tx),
    }));
    const source: IngestSource = { describe: "none", start: async () => {}, stop: async () => {} };
    const ingestor = new Ingestor({ source, store: picky, catalogue, clock });
    const message = uplinkMessage(scale, messageId, readingsOf(scale, 2, 0).slice(0, 1));
    const letter = await store.deadLetters.add({
      ...message,
      reason: "r",
      messageId,
      holdsClaim: true,
    });
    return { ingestor, message, letter };
  };

  it("stores the readings once the cause is fixed, with the message-id claim the dead letter held", async () => {
    const message = unknownTypeMessage("cell-1");
    const first = await processor.process([inbound(message, clock.now())]);
    const [letter] = first.deadLetters;
    expect(letter?.reason).toMatch(
      /^readings\.0: E_INGEST_UNKNOWN_DEVICE: device_type "Vendor Cellular Scale Pro"/,
    );
    expect(letter?.holdsClaim).toBe(true);
    // Unchanged cause: kept again, as one new dead letter with the reason.
    const again = replayJson(await replayDeadLetter(store, replay, letter!.id));
    expect(again).toMatchObject({ replayed_id: letter!.id, result: "dead_letter", stored: 0 });
    expect(again.dead_letter?.reason).toBe(letter!.reason);
    expect((await all()).map((r) => r.id)).toEqual([again.dead_letter!.id]);
    // A broker redelivery of it still stores nothing and keeps no second dead letter.
    expect((await processor.process([inbound(message, clock.now())])).outcomes[0]).toEqual({
      kind: "redelivered",
      messageId: "cell-1",
    });

    const device = await activateScale();
    const done = replayJson(await replayDeadLetter(store, replay, again.dead_letter!.id));
    expect(done).toMatchObject({ result: "stored", duplicates: 0, dead_letter: null });
    expect(done.stored).toBeGreaterThan(0);
    expect(await all()).toEqual([]);
    const rows = await store.measurements.query({
      accountId: device.accountId,
      deviceId: device.id,
      limit: 100,
    });
    expect(rows.rows).toHaveLength(done.stored);
    expect(rows.rows[0]).toMatchObject({ messageId: "cell-1", deviceId: device.id });
  });

  it("stores nothing for a message id already ingested, and stores one that never was", async () => {
    await activateScale();
    const good = uplinkMessage(scale, "cell-2", readingsOf(scale, 2, 0).slice(0, 1));
    const stored = await processor.process([inbound(good, clock.now())]);
    expect(stored.stored.length).toBeGreaterThan(0);
    // Kept by mistake, as a user or another tool could (no claim held).
    const copy = await store.deadLetters.add({
      ...good,
      reason: "by mistake",
      messageId: "cell-2",
    });
    expect(replayJson(await replayDeadLetter(store, replay, copy.id))).toEqual({
      replayed_id: copy.id,
      result: "already_ingested",
      stored: 0,
      duplicates: 0,
      dead_letter: null,
    });
    expect(await all()).toEqual([]);

    const fresh = uplinkMessage(scale, "cell-3", readingsOf(scale, 3, 0).slice(2, 3));
    const kept = await store.deadLetters.add({
      ...fresh,
      reason: "by mistake",
      messageId: "cell-3",
    });
    const done = replayJson(await replayDeadLetter(store, replay, String(kept.id)));
    expect(done).toMatchObject({ result: "stored", dead_letter: null });
    expect(done.stored).toBeGreaterThan(0);
    expect(await store.ingestedMessages.has(`${scale.hardwareUuid}/cell-3`)).toBe(true);
  });

  it("keeps a payload that is not JSON as one dead letter, and 404s a gone one", async () => {
    const letter = await store.deadLetters.add({
      topic: `rpm/v1/cell/${scale.hardwareUuid}/up`,
      payload: Buffer.from("{"),
      reason: "old reason",
    });
    const again = replayJson(await replayDeadLetter(store, replay, letter.id));
    expect(again.result).toBe("dead_letter");
    expect(again.dead_letter?.reason).toMatch(/^E_MQTT_PAYLOAD: .*not JSON/);
    expect(again.dead_letter?.received).toBe("2026-03-02T00:00:00.000000Z");
    expect((await all()).map((r) => r.id)).toEqual([again.dead_letter!.id]);
    for (const id of [letter.id, "x", 0]) {
      const error = await replayDeadLetter(store, replay, id).catch((e: unknown) => e);
      expect(isRpmlabError(error, "E_STORE_NOT_FOUND")).toBe(true);
    }
    // Gone between the read and the replay's transaction: nothing ingested.
    const raced: Replay = async (message, replays) => {
      await store.deadLetters.delete(replays.deadLetterId);
      return replay(message, replays);
    };
    const error = await replayDeadLetter(store, raced, again.dead_letter!.id).catch(
      (e: unknown) => e,
    );
    expect(isRpmlabError(error, "E_STORE_NOT_FOUND")).toBe(true);
    expect(await all()).toEqual([]);
  });

  it("replaces the dead letter, claim kept, when the store refuses the replayed message", async () => {
    const { ingestor, message, letter } = await refusedReplay("cell-5", () => ({}));
    await ingestor.start();
    try {
      const outcome = await ingestor.replay(message, { deadLetterId: letter.id, holdsClaim: true });
      expect(outcome).toMatchObject({
        kind: "dead_letter",
        deadLetter: { reason: "internal error: Error: value out of this store's range" },
      });
      const rows = await all();
      // A store-refused message's dead letter names its message id, as every other does.
      expect(rows.map((r) => [r.topic, r.messageId, r.holdsClaim])).toEqual([
        [message.topic, "cell-5", true],
      ]);
      expect(rows[0]!.id).not.toBe(letter.id);
    } finally {
      await ingestor.stop();
    }
  });

  it("answers a replay whose message and new dead letter the store both refuse with the store's error, the dead letter kept", async () => {
    const { ingestor, message, letter } = await refusedReplay("cell-6", (tx) => ({
      deadLetters: {
        ...tx.deadLetters,
        add: () => Promise.reject(new Error("dead letter too large for this store")),
      },
    }));
    await ingestor.start();
    try {
      // It hung: the replay was acknowledged as a refused live message and never answered.
      const answer = await within(
        ingestor.replay(message, { deadLetterId: letter.id, holdsClaim: true }).then(
          () => "resolved",
          (error: unknown) => error,
        ),
        "the replay's answer",
      );
      expect(answer).toMatchObject({ message: "dead letter too large for this store" });
      // Nothing of the replay was committed: the dead letter is still there, as it was.
      expect((await all()).map((r) => [r.id, r.holdsClaim])).toEqual([[letter.id, true]]);
    } finally {
      await ingestor.stop();
    }
  });

  it("joins the running ingestor's batches and events, and refuses when it is not running", async () => {
    await activateScale();
    const source: IngestSource = {
      describe: "no source",
      start: async (_sink: IngestSink) => {},
      stop: async () => {},
    };
    const ingestor = new Ingestor({ source, store, catalogue, clock });
    const message = uplinkMessage(scale, "cell-4", readingsOf(scale, 2, 0).slice(0, 1));
    const letter = await store.deadLetters.add({ ...message, reason: "r", messageId: "cell-4" });
    const notRunning = await ingestor
      .replay(message, { deadLetterId: letter.id, holdsClaim: false })
      .catch((e: unknown) => e);
    expect(isRpmlabError(notRunning, "E_STORE_UNAVAILABLE")).toBe(true);

    await ingestor.start();
    try {
      const stored: number[] = [];
      ingestor.events.on("measurement.stored", ({ rows }) => stored.push(...rows.map((r) => r.id)));
      const outcome = await ingestor.replay(message, {
        deadLetterId: letter.id,
        holdsClaim: false,
      });
      expect(outcome).toMatchObject({ kind: "uplink", messageId: "cell-4", deadLetter: null });
      expect(stored.length).toBeGreaterThan(0);
      expect(await all()).toEqual([]);
    } finally {
      await ingestor.stop();
    }
  });
});
