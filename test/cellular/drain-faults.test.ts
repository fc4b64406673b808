/**
 * The drainer when what it sends cannot be built: a disk outbox with a damaged entry, an
 * envelope that throws. Neither may end the process (an unhandled rejection), stop the entries
 * after it, or lose what is queued. The session is a stand-in that acknowledges every publish:
 * no broker is needed to see what the drainer hands it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Sqlite from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { Drainer, type DrainerOptions } from "../../src/cellular/drain.ts";
import { CellularLink, STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { type Outbox, openOutbox } from "../../src/cellular/outbox.ts";
import type { UplinkSession } from "../../src/cellular/uplink-session.ts";
import { TypedEvents } from "../../src/core/events.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";

type Item = { n: number };
const START = Date.UTC(2026, 0, 1);

/** Acknowledges every publication at once and keeps the payloads. */
function acknowledgingSession(): { session: UplinkSession; sent: unknown[] } {
  const sent: unknown[] = [];
  const session = {
    connected: true,
    events: new TypedEvents(),
    publish: async (_topic: string, payload: unknown) => {
      sent.push(payload);
    },
  };
  return { session: session as unknown as UplinkSession, sent };
}

describe("drainer faults", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function drain(
    outbox: Outbox<Item>,
    clock: VirtualClock,
    envelope: DrainerOptions<Item>["envelope"],
  ) {
    const link = new CellularLink({ clock, rng: new Rng("link"), profile: STEADY_LINK_PROFILE });
    link.start();
    const { session, sent } = acknowledgingSession();
    const drainer = new Drainer<Item>({ outbox, link, session, clock, maxBatch: 2, envelope });
    const failed: string[] = [];
    drainer.events.on("failed", ({ error }) => failed.push(error.message));
    cleanups.push(
      () => link.stop(),
      () => drainer.stop(),
    );
    drainer.start();
    return { sent, failed, drainer };
  }

  const itemsOf: DrainerOptions<Item>["envelope"] = (batch) => ({
    topic: "t",
    payload: batch.entries.map((e) => e.item.n),
  });

  it("a damaged disk entry is set aside and the entries after it are sent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-drain-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const clock = new VirtualClock({ startMs: START });
    const open = () =>
      openOutbox<Item>({ clock, rng: new Rng("drain"), capacity: 10, name: "G", dir });
    const first = await open();
    for (let n = 0; n < 5; n++) first.enqueue({ n });
    first.close();
    const db = new Sqlite(join(dir, "G.outbox.db"));
    db.prepare("UPDATE entries SET item = ? WHERE seq = 2").run("\u0000garbage");
    db.close();
    const outbox = await open();
    cleanups.push(() => outbox.close());
    const { sent } = await drain(outbox, clock, itemsOf);
    await clock.run({ until: START + 60_000 });
    expect(sent).toEqual([
      [0, 2],
      [3, 4],
    ]);
    expect(outbox.size).toBe(0);
    expect(outbox.setAside).toBe(1);
  });

  it("an envelope that throws is reported as a failure and retried; the items stay queued", async () => {
    const clock = new VirtualClock({ startMs: START });
    const outbox = await openOutbox<Item>({
      clock,
      rng: new Rng("drain"),
      capacity: 10,
      name: "G",
    });
    for (let n = 0; n < 3; n++) outbox.enqueue({ n });
    let refuse = true;
    const { sent, failed, drainer } = await drain(outbox, clock, (batch, sentAt) => {
      if (refuse) throw new Error("values[0].uuid: not a UUID");
      return itemsOf(batch, sentAt);
    });
    await clock.run({ until: START + 1_000 });
    expect(failed).toEqual(["values[0].uuid: not a UUID"]);
    expect(outbox.size).toBe(3);
    refuse = false;
    await clock.run({ until: START + 60_000 });
    expect(sent).toEqual([[0, 1], [2]]);
    expect(drainer.counts).toMatchObject({ messages: 2, failures: 1 });
  });
});
