import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../catalogue/cli-io.ts";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import { WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);

interface Listed {
  readonly id: string;
  readonly state: string;
  readonly in_flight: boolean;
  readonly next_attempt_at: string | null;
}

/**
 * A delivery being attempted right now, in the log: a dispatcher's claim moves its
 * next_attempt_at to when the claim lapses, which is no attempt's time; the log shows it in flight.
 */
describe("webhook delivery log, deliveries in flight", () => {
  let dir: string;
  let spec: string;
  let lab: WebhookLab;
  let receiver: Receiver;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-webhooks-"));
    spec = `sqlite:${join(dir, "lab.db")}`;
    // A held request must outlast the test's looks at the log (real time).
    lab = await WebhookLab.open({ store: spec, config: { timeoutMs: 60_000, concurrency: 8 } });
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    receiver.behaviour = () => ({ status: 200, body: "ok" });
    receiver.release();
    await lab.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const listed = async (): Promise<Listed[]> =>
    (await lab.admin("GET", "accounts/clinic/webhook-deliveries/")).json();

  it("shows a claimed delivery in flight with no next attempt, a retry's wait as its next attempt, in the admin API and rpmlab webhooks", async () => {
    await lab.webhook({ endpoint: receiver.url("/m") });
    await lab.device(bpm, "P-1");
    receiver.behaviour = () => ({ status: 503, body: "busy" });
    await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
    await lab.settle();
    const waiting = await listed();
    expect(waiting.length).toBeGreaterThan(0);
    for (const d of waiting) {
      expect(d).toMatchObject({ state: "pending", in_flight: false });
      expect(d.next_attempt_at).not.toBeNull();
    }

    // Their retries, claimed when due, and new deliveries created claimed: all held.
    receiver.behaviour = () => ({ hold: true });
    const sent = receiver.received.length;
    const due = Math.max(...waiting.map((d) => Date.parse(d.next_attempt_at!)));
    lab.clock.runSync({ until: due });
    await receiver.count(sent + waiting.length);
    await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(1, 2));
    // Its deliveries are created, claimed, in one transaction before the first is posted.
    await receiver.count(sent + waiting.length + 1);
    const held = await listed();
    expect(held.length).toBeGreaterThan(waiting.length);
    for (const d of held) {
      expect(d).toMatchObject({ state: "pending", in_flight: true, next_attempt_at: null });
    }
    const cli = (...args: string[]) => runCli("webhooks", ...args, "--store", spec);
    const table = await cli("deliveries", "clinic");
    expect(table.stdout.match(/MEASUREMENT\s+pending \(in flight\)\s/g)).toHaveLength(held.length);
    const shown = await cli("delivery", "clinic", waiting[0]!.id);
    expect(shown.stdout).toContain(", pending (in flight) after 1 attempt");
    expect(shown.stdout).not.toContain("next attempt");
    const json = JSON.parse((await cli("delivery", "clinic", waiting[0]!.id, "--json")).stdout);
    expect(json).toMatchObject({ in_flight: true, next_attempt_at: null });

    receiver.behaviour = () => ({ status: 200, body: "ok" });
    receiver.release();
    await lab.settle();
    for (const d of await listed())
      expect(d).toMatchObject({ state: "delivered", in_flight: false });
  });
});
