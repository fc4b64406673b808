import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import { runCli } from "../catalogue/cli-io.ts";
import {
  activateCellular,
  catalogue,
  RECEIVED,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";

const scale = senderFor(catalogue.get("Vendor Cellular Scale"), 3);
const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);

/** `rpmlab dead-letters …` through main(), on a temporary SQLite file ingestion wrote to. */
describe("rpmlab dead-letters", () => {
  let dir: string;
  let spec: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-dlq-cli-"));
    spec = `sqlite:${join(dir, "lab.db")}`;
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runCli(...args, "--store", spec);

  /** Runs `fn` on the store file, as `rpmlab serve` would have written it, then closes it. */
  async function onStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
    const clock = new VirtualClock({ startMs: RECEIVED });
    const store = await openStore(spec, { clock, rng: new Rng("dlq-cli") });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  async function ingest(...messages: { topic: string; payload: Uint8Array }[]) {
    await onStore(async (store) => {
      const processor = new MessageProcessor({ store, catalogue });
      for (const [i, m] of messages.entries()) {
        await processor.process([{ ...m, receivedAt: RECEIVED + i * 1000 }]);
      }
    });
  }

  const unknownType = (() => {
    const m = uplinkMessage(scale, "cell-1", readingsOf(scale, 2, 0).slice(0, 1));
    const envelope = JSON.parse(m.payload.toString());
    envelope.device_type = "Vendor Cellular Scale Pro";
    return { topic: m.topic, payload: Buffer.from(JSON.stringify(envelope)) };
  })();
  const truncated = (() => {
    const m = uplinkMessage(bpm, "bpm-1", readingsOf(bpm, 2, 0).slice(0, 1));
    const envelope = JSON.parse(m.payload.toString());
    envelope.readings[0].values[0].value_b64 = "HgA=";
    return { topic: m.topic, payload: Buffer.from(JSON.stringify(envelope)) };
  })();
  const notUtf8 = { topic: `rpm/v1/gw/${bpm.hardwareUuid}/up`, payload: Buffer.from([0xff, 0x7b]) };

  it("lists newest first, as a table and as JSON, with --limit and filters", async () => {
    await ingest(truncated, notUtf8, unknownType);
    const table = await cli("dead-letters", "list");
    expect(table).toMatchObject({ code: 0, stderr: "" });
    const lines = table.stdout.split("\n");
    expect(lines[0]).toMatch(/^ID\s+RECEIVED\s+TOPIC\s+MESSAGE ID\s+BYTES\s+REASON$/);
    expect(lines[1]).toMatch(/cell-1\s+\d+\s+readings\.0: E_INGEST_UNKNOWN_DEVICE: device_type/);
    expect(lines[3]).toMatch(/bpm-1\s+\d+\s+readings\.0: E_CODEC_TRUNCATED: /);
    const json = JSON.parse((await cli("dead-letters", "list", "--limit", "2", "--json")).stdout);
    expect(json.map((j: { message_id: string | null }) => j.message_id)).toEqual(["cell-1", null]);
    const mine = await cli("dead-letters", "list", "--source", bpm.hardwareUuid, "--json");
    expect(JSON.parse(mine.stdout)).toHaveLength(2);
    // The admin API's message_id filter: a device's message found by the id it sent.
    const byId = await cli("dead-letters", "list", "--message-id", "cell-1", "--json");
    expect(byId).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(byId.stdout).map((j: { topic: string }) => j.topic)).toEqual([
      unknownType.topic,
    ]);
    expect((await cli("dead-letters", "list", "--message-id", "cell-2")).stdout).toBe(
      "no dead letters",
    );
    // 1e3 and 0x10 are numbers to Number(), not whole numbers as a user writes them.
    for (const limit of ["0", "1e3", "0x10"]) {
      const bad = await cli("dead-letters", "list", "--limit", limit);
      expect(bad).toMatchObject({
        code: 2,
        stderr: expect.stringContaining(`--limit must be 1 to 1000, got "${limit}"`),
      });
    }
    // A memory store is another process's: this command would answer from an empty one.
    const memory = await runCli("dead-letters", "list", "--store", "memory");
    expect(memory.code).toBe(2);
    expect(memory.stderr).toMatch(/E_USAGE: --store memory is a store inside one process/);
    // A usage error naming the flag (exit 2), as every other bad flag.
    const since = await cli("dead-letters", "list", "--since", "soon");
    expect(since.code).toBe(2);
    expect(since.stderr).toMatch(/E_USAGE: --since: Enter a valid date\/time\./);
    const backwards = await cli(
      ...["dead-letters", "list", "--since", "2026-01-02", "--until", "2026-01-01"],
    );
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toMatch(/E_USAGE: --until: Must be later than since\./);
    await onStore(async (store) => {
      for (const row of (await store.deadLetters.list()).rows)
        await store.deadLetters.delete(row.id);
    });
    expect((await cli("dead-letters", "list")).stdout).toBe("no dead letters");
  });

  it("reaches every page with --page, and says on stderr when a list is cut at --limit", async () => {
    await ingest(truncated, notUtf8, unknownType, { ...notUtf8, payload: Buffer.from([0xfe]) });
    const ids = (stdout: string) => (JSON.parse(stdout) as { id: number }[]).map((d) => d.id);
    const all = ids((await cli("dead-letters", "list", "--json")).stdout);
    expect(all).toHaveLength(4);
    // Page by page, newest first: the whole list, each page's note saying where it is.
    const first = await cli("dead-letters", "list", "--limit", "3", "--json");
    expect(first.code).toBe(0);
    expect(ids(first.stdout)).toEqual(all.slice(0, 3));
    expect(first.stderr).toBe("dead letters 1–3 of 4, newest first: --page 2 for the next");
    const second = await cli("dead-letters", "list", "--limit", "3", "--page", "2", "--json");
    expect(ids(second.stdout)).toEqual(all.slice(3));
    expect(second.stderr).toBe("dead letters 4–4 of 4, newest first");
    // The table too: stdout keeps only the table, the note goes to stderr.
    const table = await cli("dead-letters", "list", "--limit", "1");
    expect(table.stdout.split("\n")).toHaveLength(2);
    expect(table.stderr).toBe("dead letters 1–1 of 4, newest first: --page 2 for the next");
    // Filters count: the note counts what they match, not every dead letter.
    const mine = await cli("dead-letters", "list", "--source", bpm.hardwareUuid, "--limit", "2");
    expect(mine.stderr).toBe("dead letters 1–2 of 3, newest first: --page 2 for the next");
    // The whole list on one page says nothing more.
    expect((await cli("dead-letters", "list", "--limit", "4")).stderr).toBe("");
    // Past the last page (and far past it) is a usage error naming --page, as for deliveries.
    for (const page of ["3", "999999999999999", "9007199254740991"]) {
      const past = await cli("dead-letters", "list", "--limit", "2", "--page", page);
      expect(past.code, past.stderr).toBe(2);
      expect(past.stdout).toBe("");
      expect(past.stderr).toBe(
        `rpmlab: E_USAGE: --page ${page} is past the last page: 4 dead letters, 2 pages of 2`,
      );
    }
    const one = await cli("dead-letters", "list", "--message-id", "cell-1", "--page", "2");
    expect(one.stderr).toBe(
      "rpmlab: E_USAGE: --page 2 is past the last page: 1 dead letter, 1 page of 50",
    );
    for (const page of ["0", "9007199254740992", "2.5"]) {
      const bad = await cli("dead-letters", "list", "--page", page);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(
        `--page must be a whole number from 1 to 9007199254740991, got "${page}"`,
      );
    }
  });

  it("shows one's payload as text and base64, and deletes it", async () => {
    await ingest(truncated, notUtf8);
    const [text, binary] = JSON.parse(
      (await cli("dead-letters", "list", "--json")).stdout,
    ).reverse();
    const shown = await cli("dead-letters", "show", String(text.id));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`dead letter ${text.id}: ${truncated.topic}`);
    expect(shown.stdout).toContain(`reason: ${text.reason}`);
    expect(shown.stdout).toContain(`payload (text):\n  ${truncated.payload.toString()}`);
    expect(shown.stdout).toContain(`payload (base64):\n  ${truncated.payload.toString("base64")}`);
    const raw = JSON.parse((await cli("dead-letters", "show", String(binary.id), "--json")).stdout);
    expect(raw).toMatchObject({ payload_text: null, payload_base64: "/3s=", payload_size: 2 });
    expect((await cli("dead-letters", "show", String(binary.id))).stdout).toContain(
      "payload (text): not UTF-8",
    );

    expect((await cli("dead-letters", "delete", String(binary.id))).stdout).toBe(
      `dead letter ${binary.id} deleted`,
    );
    for (const command of ["show", "delete", "replay"]) {
      const gone = await cli("dead-letters", command, String(binary.id));
      expect(gone.code, command).toBe(1);
      expect(gone.stderr).toBe(`rpmlab: E_STORE_NOT_FOUND: no dead letter ${binary.id}`);
    }
  });

  it("shows a device's control characters escaped: its escape sequences never reach the terminal", async () => {
    // An unknown key of escapes (a reason quotes it), a topic of them (an external broker's
    // looser ACL lets it through), a payload of them (shown as text).
    const key = JSON.parse(truncated.payload.toString());
    key["\u001b[2J"] = 1;
    await ingest(
      { topic: truncated.topic, payload: Buffer.from(JSON.stringify(key)) },
      { topic: "rpm/v1/gw/29705612\u001b[31m/up", payload: Buffer.from("{}") },
      { topic: notUtf8.topic, payload: Buffer.from('{"a":\t"\u001b]0;pwned\u0007"}') },
    );
    const esc = "\u001b";
    const table = await cli("dead-letters", "list");
    expect(table.code).toBe(0);
    expect(table.stdout).not.toContain(esc);
    expect(table.stdout).toContain('Unrecognized key: "\\u001b[2J"');
    expect(table.stdout).toContain("rpm/v1/gw/29705612\\u001b[31m/up");
    // The columns stay aligned: each row's REASON starts where the header's does.
    const [header, ...rows] = table.stdout.split("\n");
    for (const row of rows) expect(row.indexOf("E_MQTT_")).toBe(header!.indexOf("REASON"));
    for (const id of ["1", "2", "3"]) {
      const shown = await cli("dead-letters", "show", id);
      expect(shown.stdout, id).not.toContain(esc);
      expect(shown.stdout, id).not.toContain("\u0007");
    }
    expect((await cli("dead-letters", "show", "3")).stdout).toContain(
      '  {"a":\t"\\u001b]0;pwned\\u0007"}',
    );
    // --json is JSON: the characters as they are, escaped by JSON itself.
    const json = JSON.parse((await cli("dead-letters", "show", "3", "--json")).stdout);
    expect(json.payload_text).toBe('{"a":\t"\u001b]0;pwned\u0007"}');
    // A replay that fails again prints the new dead letter's reason: escaped too.
    const replayed = await cli("dead-letters", "replay", "1");
    expect(replayed.stdout).toMatch(/failed again .*Unrecognized key: "\\u001b\[2J"/);
    expect(replayed.stdout).not.toContain(esc);
  });

  it("purges what the filters match, or everything with --all; neither is a usage error", async () => {
    await ingest(truncated, notUtf8, unknownType);
    const bare = await cli("dead-letters", "purge");
    expect(bare.code).toBe(2);
    expect(bare.stderr).toBe(
      "rpmlab: E_USAGE: --all: Give a filter, or all to delete every dead letter.",
    );
    expect((await cli("dead-letters", "purge", "--message-id", "bpm-1")).stdout).toBe(
      "1 dead letter deleted",
    );
    // A blank --message-id filters nothing, as the API's blank message_id: --all is still needed.
    expect((await cli("dead-letters", "purge", "--message-id", " ")).code).toBe(2);
    expect((await cli("dead-letters", "purge", "--source", bpm.hardwareUuid)).stdout).toBe(
      "1 dead letter deleted",
    );
    const [left] = JSON.parse((await cli("dead-letters", "list", "--json")).stdout);
    expect(left.topic).toBe(unknownType.topic);
    expect(JSON.parse((await cli("dead-letters", "purge", "--all", "--json")).stdout)).toEqual({
      deleted: 1,
    });
    expect((await cli("dead-letters", "list")).stdout).toBe("no dead letters");
  });

  it("replays: failed again while the cause stands, stored once the device is activated", async () => {
    await ingest(unknownType);
    const [first] = JSON.parse((await cli("dead-letters", "list", "--json")).stdout);
    const again = await cli("dead-letters", "replay", String(first.id));
    expect(again.code).toBe(1);
    const [kept] = JSON.parse((await cli("dead-letters", "list", "--json")).stdout);
    expect(again.stderr).toBe(
      `rpmlab: E_DEAD_LETTER_KEPT: dead letter ${first.id} failed again, kept as dead letter ${kept.id}`,
    );
    expect(kept.id).not.toBe(first.id);
    expect(again.stdout).toBe(
      `dead letter ${first.id} replayed: failed again (0 records stored, 0 duplicates); kept as dead letter ${kept.id}: ${first.reason}`,
    );

    const device = await onStore((store) => activateCellular(store, scale));
    const done = JSON.parse(
      (await cli("dead-letters", "replay", String(kept.id), "--json")).stdout,
    );
    expect(done).toMatchObject({ replayed_id: kept.id, result: "stored", dead_letter: null });
    expect(done.stored).toBeGreaterThan(0);
    const stored = await onStore((store) =>
      store.measurements.query({ accountId: device.accountId, deviceId: device.id, limit: 100 }),
    );
    expect(stored.rows).toHaveLength(done.stored);
    expect((await cli("dead-letters", "list")).stdout).toBe("no dead letters");
  });

  it("has help texts", async () => {
    const help = await runCli("dead-letters", "--help");
    expect(help.stdout).toMatch(/list \[options\]\s+List dead letters, newest first/);
    expect(help.stdout).toMatch(/replay \[options\] <id>\s+Run one through ingestion again/);
  });
});
