/**
 * Damaged characteristic values from devices the lab knows (activated, so the codecs decode them:
 * test/ingest/fuzz.test.ts sends from unknown devices, which are refused before any byte is
 * read): truncated, extended, bytes changed, wrong sensor codes, base64 that is not base64.
 * Each lands stored or dead-lettered with a reason naming the reading and the byte or field at
 * fault, never an internal error, and the intact message batched with it is still stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import type { MessageOutcome } from "../../src/ingest/events.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import type { Store } from "../../src/store/store.ts";
import {
  catalogue,
  deviceForPatient,
  inbound,
  memoryStore,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";

const RUNS = 1500;

/** Where a reason points: a byte of a value, or a field of the envelope or of a record. */
const NAMES_WHERE =
  /at byte \d+|\b(uuid|value_b64|values|timestamp|sequence_number|sequence|sensor_code|sensor_id|device_type|received_at)\b/;

interface Envelope {
  message_id: string;
  readings: {
    sensor_code?: string;
    sequence: number;
    values: { uuid: string; value_b64: string }[];
  }[];
}

/** One damage to one value (or reading) of a valid envelope. */
function damage(rng: Rng, json: Envelope): void {
  const reading = rng.pick(json.readings);
  const value = rng.pick(reading.values);
  const bytes = [...Buffer.from(value.value_b64, "base64")];
  const at = rng.int(0, Math.max(0, bytes.length - 1));
  switch (rng.int(0, 6)) {
    case 0:
      bytes.length = rng.int(0, bytes.length);
      break;
    case 1:
      bytes[at] = rng.int(0, 255);
      break;
    case 2:
      for (let i = 0; i < bytes.length; i++) bytes[i] = rng.int(0, 255);
      break;
    case 3:
      bytes.push(...Array.from({ length: rng.int(1, 12) }, () => rng.int(0, 255)));
      break;
    case 4:
      if (reading.sensor_code !== undefined) {
        reading.sensor_code = rng.pick(["0", "1", "7", "17", "40", "99", "255", "999"]);
      }
      break;
    case 5:
      // Not base64 at all, or base64 of the wrong alphabet or padding.
      value.value_b64 = rng.pick(["!!!!", "AAA", "A===", "_-_-", "AAAA====", "=AAA"]);
      return;
    default:
      value.uuid = rng.pick(["2A35", "2A18", "2A9D", "2A19", "180F", "FFFF"]);
  }
  value.value_b64 = Buffer.from(bytes).toString("base64");
}

function reasonOf(outcome: MessageOutcome | undefined): string | null {
  if (outcome?.kind === "dead_letter") return outcome.deadLetter.reason;
  if (outcome?.kind === "uplink") return outcome.deadLetter?.reason ?? null;
  return null;
}

describe("damaged values from known devices", () => {
  let store: Store;
  let processor: MessageProcessor;
  const senders = catalogue.profiles.map((profile, i) => senderFor(profile, i));

  beforeAll(async () => {
    ({ store } = await memoryStore());
    const account = await store.accounts.create({
      clientDomain: "clinic",
      environment: "development",
    });
    for (const [i, sender] of senders.entries()) {
      if (sender.profile.connectivity === "cellular") {
        await store.devices.create(account.id, {
          name: sender.profile.name,
          sensorCode: null,
          hardwareUuid: sender.hardwareUuid,
          sensorId: null,
          status: "Delivered",
        });
      } else {
        await deviceForPatient(store, account.id, sender, `P-${i}`);
      }
    }
    processor = new MessageProcessor({ store, catalogue });
  });
  afterAll(() => store.close());

  it(`dead-letter each naming the byte or field, the intact batchmate stored (${RUNS} cases)`, async () => {
    const rng = new Rng("codec-fuzz");
    const readings = senders.map((s) => readingsOf(s, 30, 0));
    const unclear: string[] = [];
    let deadLettered = 0;
    for (let run = 0; run < RUNS; run++) {
      const i = rng.int(0, senders.length - 1);
      const sender = senders[i]!;
      const mine = readings[i]!;
      const from = (run * 3) % (mine.length - 3);
      const good = uplinkMessage(sender, `good-${run}`, mine.slice(from, from + 1), run * 4);
      const base = uplinkMessage(sender, `bad-${run}`, mine.slice(from + 1, from + 3), run * 4 + 1);
      const json = JSON.parse(base.payload.toString()) as Envelope;
      damage(rng, json);
      const bad = { topic: base.topic, payload: Buffer.from(JSON.stringify(json)) };
      const result = await processor.process([inbound(bad), inbound(good)]);
      const reason = reasonOf(result.outcomes[0]);
      if (reason !== null) {
        deadLettered++;
        if (/internal error/.test(reason) || !NAMES_WHERE.test(reason)) unclear.push(reason);
      }
      expect(result.outcomes[1], `intact message after ${reason}`).toMatchObject({
        kind: "uplink",
        deadLetter: null,
      });
      const stored = result.outcomes[1]!.kind === "uplink" ? result.outcomes[1]!.stored : 0;
      expect(stored + (result.outcomes[1] as { duplicates: number }).duplicates).toBeGreaterThan(0);
    }
    expect(unclear).toEqual([]);
    // The damage reached the codecs: most damaged messages are refused.
    expect(deadLettered).toBeGreaterThan(RUNS / 2);
  }, 300_000);
});
