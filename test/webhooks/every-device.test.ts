import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import type { MeasurementRecordBody } from "./consumer-schema.ts";
import { expectConsumable, WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

/**
 * Every device type of the catalogue (spec 2.8) through a measurement webhook, single and array:
 * what a strict consumer written from wire-formats and 2.8 accepts, metric by metric — sensor
 * code of the device, "0.00" for a value 2 the metric has none of, only 2.8's filter_params.
 */
describe.each([
  ["memory", false],
  // serve's default: the dispatcher builds bodies in its worker thread.
  ["a SQLite file", true],
])("measurement webhooks of every device type (%s)", (_name, onFile) => {
  let dir: string | undefined;
  let lab: WebhookLab;
  let receiver: Receiver;
  beforeEach(async () => {
    dir = onFile ? mkdtempSync(join(tmpdir(), "rpmlab-every-device-")) : undefined;
    lab = await WebhookLab.open(
      dir === undefined ? {} : { store: `sqlite:${join(dir, "lab.db")}` },
    );
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await lab.close();
    await receiver.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("are consumable, each metric the device type sends included", async () => {
    const single = await lab.webhook({ endpoint: receiver.url("/single") });
    const arrays = await lab.webhook({ endpoint: receiver.url("/arrays"), postAsArray: true });
    const profiles = catalogue.profiles;
    for (const [i, profile] of profiles.entries()) {
      const sender = senderFor(profile, i);
      await lab.device(sender, `P-${i}`);
      await lab.ingest(
        sender,
        readingsOf(sender, 30, 0).filter((r) => !r.duplicate),
      );
    }
    await lab.settle();
    const records = expectConsumable(
      receiver.received.filter((r) => r.path === "/single"),
      single,
    ) as MeasurementRecordBody[];
    const grouped = expectConsumable(
      receiver.received.filter((r) => r.path === "/arrays"),
      arrays,
    ) as MeasurementRecordBody[][];
    expect(grouped.flat()).toHaveLength(records.length);
    const sent = new Set(records.map((r) => `${r.device_name}|${r.metric}`));
    for (const profile of profiles) {
      expect(
        [...sent].filter((k) => k.startsWith(`${profile.name}|`)).length,
        profile.name,
      ).toBeGreaterThan(0);
    }
  });
});
