import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Sqlite from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { type Outbox, openOutbox } from "../../src/cellular/outbox.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { MAX_READINGS, MESSAGE_ID_PATTERN } from "../../src/mqtt/envelope.ts";
import { within } from "../mqtt/helpers.ts";

const START = Date.UTC(2026, 0, 1);
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "rpmlab-outbox-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Item = { n: number };
const KINDS = [
  {
    kind: "memory",
    open: (clock: VirtualClock, capacity: number) =>
      openOutbox<Item>({ clock, rng: new Rng("outbox-test"), capacity, name: "G1" }),
  },
  {
    kind: "disk",
    open: (clock: VirtualClock, capacity: number) =>
      openOutbox<Item>({
        clock,
        rng: new Rng("outbox-test"),
        capacity,
        name: "G1",
        dir: tempDir(),
      }),
  },
] as const;

const items = (batch: { entries: readonly { item: Item }[] } | null) =>
  batch?.entries.map((e) => e.item.n) ?? [];

for (const { kind, open } of KINDS)
  describe(`outbox (${kind})`, () => {
    it("gives the oldest first, in batches, and removes only what was taken", async () => {
      const clock = new VirtualClock({ startMs: START });
      const outbox: Outbox<Item> = await open(clock, 10);
      for (let n = 0; n < 5; n++) {
        clock.runSync({ until: START + n * 1000 });
        outbox.enqueue({ n });
      }
      const first = outbox.take(2)!;
      expect(items(first)).toEqual([0, 1]);
      expect(first.entries.map((e) => e.queuedAt - START)).toEqual([0, 1000]);
      expect(items(outbox.take(2))).toEqual([0, 1]);
      expect(outbox.remove(first)).toBe(2);
      expect(outbox.size).toBe(3);
      expect(items(outbox.take())).toEqual([2, 3, 4]);
      outbox.remove(outbox.take()!);
      expect(outbox.take()).toBeNull();
      expect(outbox.size).toBe(0);
      outbox.close();
    });

    it("names a batch by its entries: the same entries repeat the id, others never reuse it", async () => {
      const clock = new VirtualClock({ startMs: START });
      const outbox = await open(clock, 100);
      for (let n = 0; n < 3; n++) outbox.enqueue({ n });
      const a = outbox.take()!;
      expect(a.messageId).toMatch(MESSAGE_ID_PATTERN);
      outbox.enqueue({ n: 3 });
      // A retry pinned to the failed batch's last entry: same entries, same id.
      const retry = outbox.take(MAX_READINGS, a.lastSeq)!;
      expect(retry.messageId).toBe(a.messageId);
      expect(items(retry)).toEqual([0, 1, 2]);
      const grown = outbox.take()!;
      expect(grown.messageId).not.toBe(a.messageId);
      outbox.remove(retry);
      const single = outbox.take()!;
      expect(items(single)).toEqual([3]);
      expect(new Set([a.messageId, grown.messageId, single.messageId]).size).toBe(3);
      outbox.close();
    });

    it("held() lists every entry it holds, oldest first: none sent or dropped", async () => {
      const outbox = await open(new VirtualClock({ startMs: START }), 3);
      expect(outbox.held()).toEqual([]);
      for (let n = 0; n < 5; n++) outbox.enqueue({ n });
      outbox.remove(outbox.take(1)!);
      expect(outbox.held().map((e) => e.item.n)).toEqual([3, 4]);
      expect(outbox.held().map((e) => e.seq)).toEqual([4, 5]);
      outbox.close();
    });

    it("when full, drops the oldest and counts it", async () => {
      const clock = new VirtualClock({ startMs: START });
      const outbox = await open(clock, 3);
      for (let n = 0; n < 7; n++) outbox.enqueue({ n });
      expect(outbox.size).toBe(3);
      expect(outbox.dropped).toBe(4);
      expect(items(outbox.take())).toEqual([4, 5, 6]);
      outbox.close();
    });

    it("names the entries it drops when full, oldest first, so their sender can account for them", async () => {
      const outbox = await open(new VirtualClock({ startMs: START }), 3);
      const dropped: number[] = [];
      outbox.events.on("dropped", ({ entries }) => {
        // Told after the drop: the outbox already holds the new item and not these.
        expect(outbox.size).toBe(3);
        for (const e of entries) dropped.push(e.item.n);
      });
      for (let n = 0; n < 3; n++) outbox.enqueue({ n });
      expect(dropped).toEqual([]);
      for (let n = 3; n < 6; n++) outbox.enqueue({ n });
      expect(dropped).toEqual([0, 1, 2]);
      expect(outbox.dropped).toBe(3);
      outbox.close();
    });

    it("a batch whose oldest entries were dropped while in flight removes only what is left", async () => {
      const clock = new VirtualClock({ startMs: START });
      const outbox = await open(clock, 3);
      for (let n = 0; n < 3; n++) outbox.enqueue({ n });
      const inFlight = outbox.take()!;
      outbox.enqueue({ n: 3 }); // drops 0
      expect(outbox.remove(inFlight)).toBe(2);
      expect(items(outbox.take())).toEqual([3]);
      expect(outbox.dropped).toBe(1);
      outbox.close();
    });

    it("keeps order through many batches and drops (long-lived outbox)", async () => {
      const clock = new VirtualClock({ startMs: START });
      const outbox = await open(clock, 300);
      let next = 0;
      let expected = 0;
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 150; i++) outbox.enqueue({ n: next++ });
        // Full at 300: the oldest go first.
        expected = Math.max(expected, next - 300);
        const batch = outbox.take(100)!;
        expect(items(batch)[0]).toBe(expected);
        expect(items(batch)).toEqual(Array.from({ length: 100 }, (_, i) => expected + i));
        expect(outbox.remove(batch)).toBe(100);
        expected += 100;
        expect(outbox.size).toBe(next - expected);
      }
      expect(outbox.dropped).toBe(next - outbox.size - 20 * 100);
      outbox.close();
    });

    it("rejects a capacity or batch size out of range", async () => {
      const clock = new VirtualClock({ startMs: START });
      await expect(open(clock, 0)).rejects.toThrow(/capacity/);
      const outbox = await open(clock, 5);
      expect(() => outbox.take(0)).toThrow(/1 to 256/);
      expect(() => outbox.take(MAX_READINGS + 1)).toThrow(/1 to 256/);
      outbox.close();
    });
  });

describe("disk outbox across restarts", () => {
  it("a reopened outbox holds the same entries, ids, drop count and sequence", async () => {
    const dir = tempDir();
    const clock = new VirtualClock({ startMs: START });
    const first = await openOutbox<Item>({
      clock,
      rng: new Rng("outbox-test"),
      capacity: 4,
      name: "356938035643809",
      dir,
    });
    for (let n = 0; n < 6; n++) first.enqueue({ n });
    const before = first.take()!;
    first.close();
    clock.runSync({ until: START + 3_600_000 });
    const again = await openOutbox<Item>({
      clock,
      rng: new Rng("outbox-test"),
      capacity: 4,
      name: "356938035643809",
      dir,
    });
    expect(again.size).toBe(4);
    expect(again.dropped).toBe(2);
    const after = again.take()!;
    expect(after).toEqual(before);
    again.remove(after);
    // Sequence numbers are never reused, even once the outbox is empty.
    expect(again.enqueue({ n: 6 }).seq).toBe(7);
    again.close();
  });

  it("a reopened outbox's held() lists what an earlier process queued as well as its own, oldest first", async () => {
    const dir = tempDir();
    const clock = new VirtualClock({ startMs: START });
    const open = () =>
      openOutbox<Item>({ clock, rng: new Rng("outbox-test"), capacity: 4, name: "G7", dir });
    const first = await open();
    for (let n = 0; n < 3; n++) first.enqueue({ n });
    first.remove(first.take(1)!);
    first.close();
    const again = await open();
    for (let n = 3; n < 6; n++) again.enqueue({ n });
    // Capacity 4: n=0 was sent, n=1 dropped when n=5 came; the earlier process's n=2 is held.
    expect(again.held().map((e) => [e.seq, e.item.n])).toEqual([
      [3, 2],
      [4, 3],
      [5, 4],
      [6, 5],
    ]);
    expect(again.held()).toHaveLength(again.size);
    again.close();
  });

  it("a new outbox file starts a new incarnation: its ids differ from a deleted one's", async () => {
    const clock = new VirtualClock({ startMs: START });
    const a = await openOutbox<Item>({
      clock,
      rng: new Rng("outbox-test"),
      capacity: 4,
      name: "G",
      dir: tempDir(),
    });
    a.enqueue({ n: 0 });
    clock.runSync({ until: START + 1 });
    const b = await openOutbox<Item>({
      clock,
      rng: new Rng("outbox-test"),
      capacity: 4,
      name: "G",
      dir: tempDir(),
    });
    b.enqueue({ n: 0 });
    expect(a.take()!.messageId).not.toBe(b.take()!.messageId);
    a.close();
    b.close();
  });

  it("outboxes created at the same instant by senders of different seeds share no id", async () => {
    // `rpmlab device … --speed max --start T` run twice with other seeds: the same virtual
    // instant, other readings. With ids from the time alone the second run's were repeats.
    const clock = new VirtualClock({ startMs: START });
    const ids = [];
    for (const seed of ["1", "2"]) {
      const outbox = await openOutbox<Item>({
        clock,
        rng: new Rng(seed).fork("outbox"),
        capacity: 4,
        name: "356938035643809",
        dir: tempDir(),
      });
      outbox.enqueue({ n: 0 });
      ids.push(outbox.take()!.messageId);
      outbox.close();
    }
    expect(ids[0]).not.toBe(ids[1]);
    for (const id of ids) expect(id).toMatch(MESSAGE_ID_PATTERN);
  });

  it("entries that do not read back are set aside, kept and named; the others still go", async () => {
    const dir = tempDir();
    const clock = new VirtualClock({ startMs: START });
    const open = () =>
      openOutbox<Item>({
        clock,
        rng: new Rng("outbox-test"),
        capacity: 10,
        name: "G",
        dir,
        check: (item) => (Number.isInteger((item as Item).n) ? undefined : "n"),
      });
    const first = await open();
    for (let n = 0; n < 4; n++) first.enqueue({ n });
    first.close();
    // A damaged file: entry 2 is cut mid-JSON, entry 3 is JSON but not an item.
    const db = new Sqlite(join(dir, "G.outbox.db"));
    db.prepare("UPDATE entries SET item = ? WHERE seq = ?").run('{"n":1', 2);
    db.prepare("UPDATE entries SET item = ? WHERE seq = ?").run('{"n":"two"}', 3);
    db.close();
    const outbox = await open();
    const setAside: { seq: number; code: string; field: unknown; message: string }[] = [];
    outbox.events.on("setAside", ({ seq, error }) =>
      setAside.push({ seq, code: error.code, field: error.details.field, message: error.message }),
    );
    expect(items(outbox.take())).toEqual([0, 3]);
    expect(setAside.map((s) => [s.seq, s.code, s.field])).toEqual([
      [2, "E_OUTBOX_UNAVAILABLE", "item"],
      [3, "E_OUTBOX_UNAVAILABLE", "item.n"],
    ]);
    expect(setAside[0]!.message).toMatch(/entry 2: item: not JSON .*position 6/);
    expect(outbox.size).toBe(2);
    expect(outbox.setAside).toBe(2);
    outbox.close();
    // Nothing is lost: the set-aside rows stay in the file as they were, counted across opens.
    const kept = new Sqlite(join(dir, "G.outbox.db"));
    expect(kept.prepare("SELECT seq, item FROM set_aside ORDER BY seq").all()).toEqual([
      { seq: 2, item: '{"n":1' },
      { seq: 3, item: '{"n":"two"}' },
    ]);
    kept.close();
    const reopened = await open();
    expect(reopened.setAside).toBe(2);
    reopened.close();
  });

  it("a file that is not an outbox fails with E_OUTBOX_UNAVAILABLE naming it", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "G.outbox.db"), "this is not a database, it is text ".repeat(100));
    const clock = new VirtualClock({ startMs: START });
    const error = await openOutbox({
      clock,
      rng: new Rng("outbox-test"),
      capacity: 4,
      name: "G",
      dir,
    }).catch((e) => e);
    expect(isRpmlabError(error, "E_OUTBOX_UNAVAILABLE")).toBe(true);
    expect((error as Error).message).toContain("G.outbox.db");
    await expect(
      openOutbox({ clock, rng: new Rng("outbox-test"), capacity: 4, name: "../x", dir }),
    ).rejects.toThrow(/name/);
  });

  it("a process killed (SIGKILL) while queuing loses none of the items it was told were queued", async () => {
    const dir = tempDir();
    const writer = fileURLToPath(new URL("./outbox-writer.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", writer, dir, "K", "1000000"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    await within(
      new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.split("\n").length > 2000) resolve();
        });
        child.once("exit", () => reject(new Error(`the writer exited: ${err}`)));
      }),
      "the writer to queue 2000 items",
      30_000,
    );
    child.kill("SIGKILL");
    await within(exited, "the writer to die");
    const acknowledged = out
      .split("\n")
      .filter((l) => l !== "")
      .map(Number);
    const clock = new VirtualClock({ startMs: START });
    const outbox = await openOutbox<{ n: number }>({
      clock,
      rng: new Rng("outbox-test"),
      capacity: 1_000_000,
      name: "K",
      dir,
    });
    const held = new Set<number>();
    for (let batch = outbox.take(); batch !== null; batch = outbox.take()) {
      for (const e of batch.entries) {
        expect(e.item.n).toBe(e.seq - 1);
        held.add(e.seq);
      }
      outbox.remove(batch);
    }
    const lost = acknowledged.filter((seq) => !held.has(seq));
    expect(lost).toEqual([]);
    expect(held.size).toBeGreaterThanOrEqual(acknowledged.length);
    outbox.close();
  });
});
