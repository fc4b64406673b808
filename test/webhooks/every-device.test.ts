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
describe("measurement webhooks of every device type", () => {
  let lab: WebhookLab;
  let receiver: Receiver;
  beforeEach(async () => {
    lab = await WebhookLab.open();
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await lab.close();
    await receiver.close();
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
