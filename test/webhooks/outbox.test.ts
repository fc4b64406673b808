import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { catalogue, inbound, readingsOf, senderFor, uplinkMessage } from "../ingest/fixtures.ts";
import { expectConsumable, WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
const scale = senderFor(catalogue.get("Vendor Scale"), 2);

/**
 * Design rule 2: the ingestion transaction writes at most one outbox entry per account, never
 * one per measurement, and none when it stored nothing.
 */
describe("the measurement outbox", () => {
  let lab: WebhookLab;
  let receiver: Receiver;
  beforeEach(async () => {
    lab = await WebhookLab.open();
    receiver = await Receiver.start();
    // No dispatcher here: what the outbox holds is the subject.
    await lab.dispatcher.stop();
  });
  afterEach(async () => {
    await lab.close();
    await receiver.close();
  });

  it("one entry per account per batch, naming exactly its measurements; none for re-sends or orphans", async () => {
    const other = await lab.store.accounts.create({
      clientDomain: "other",
      environment: "development",
    });
    await lab.device(bpm, "P-1");
    const patient = await lab.store.patients.create(other.id, { externalId: "Q-1" });
    await lab.store.devices.create(other.id, {
      name: scale.profile.name,
      sensorCode: scale.profile.sensor_code,
      hardwareUuid: scale.hardwareUuid,
      patientId: patient.id,
      status: "Active",
    });
    const messages = [
      uplinkMessage(bpm, "a-1", readingsOf(bpm, 5, 0).slice(0, 4)),
      uplinkMessage(scale, "b-1", readingsOf(scale, 5, 0).slice(0, 3)),
      uplinkMessage(bpm, "a-2", readingsOf(bpm, 5, 0).slice(4, 6)),
    ];
    const result = await lab.processor.process(messages.map((m) => inbound(m, lab.clock.now())));
    expect(result.stored.length).toBeGreaterThan(10);
    const entries = await lab.store.transaction((tx) => tx.webhookOutbox.take(100));
    expect(entries).toHaveLength(2);
    for (const entry of entries) {
      const mine = result.stored.filter((m) => m.accountId === entry.accountId).map((m) => m.id);
      const named = entry.ranges!.flatMap(([a, b]) =>
        Array.from({ length: b - a + 1 }, (_, i) => a + i),
      );
      expect(named).toEqual(mine);
    }

    // The same messages again (a broker redelivery) and an orphan reading store nothing to send.
    const before = await lab.store.webhookOutbox.count();
    await lab.processor.process(messages.map((m) => inbound(m, lab.clock.now())));
    const orphan = senderFor(catalogue.get("Vendor Glucometer"), 7);
    const stray = await lab.processor.process([
      inbound(uplinkMessage(orphan, "c-1", readingsOf(orphan, 5, 0).slice(0, 2)), lab.clock.now()),
    ]);
    expect(stray.stored.length).toBeGreaterThan(0);
    expect(await lab.store.webhookOutbox.count()).toBe(before);
  });

  it("orphan readings attached at activation go to the measurement webhooks", async () => {
    lab.dispatcher.start();
    await lab.webhook({ endpoint: receiver.url("/m") });
    const orphan = senderFor(catalogue.get("Vendor Glucometer"), 7);
    await lab.store.gateways.updateStatus(orphan.hardwareUuid, {});
    const stray = await lab.processor.process([
      inbound(uplinkMessage(orphan, "c-1", readingsOf(orphan, 5, 0).slice(0, 2)), lab.clock.now()),
    ]);
    const activated = await lab.hwi("POST", "hwi-devices/", {
      device: { name: orphan.profile.name, hardware_uuid: orphan.hardwareUuid },
      patient: { external_id: "P-7" },
    });
    expect(activated.json().status).toBe("Active");
    await lab.settle();
    expect(receiver.received).toHaveLength(stray.stored.length);
    expectConsumable(receiver.received, { event: "MEASUREMENT", postAsArray: false });
    expect(
      receiver.received.every((r) => (r.json as { patient_id: string }).patient_id === "P-7"),
    ).toBe(true);
  });
});
