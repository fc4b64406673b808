import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toIsoMicros } from "../../src/core/time.ts";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import type { MeasurementRecordBody } from "./consumer-schema.ts";
import { expectConsumable, HOUR, MINUTE, WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

const bpm = (n: number) => senderFor(catalogue.get("Vendor BPM - Wide Range"), n);
const glucometer = senderFor(catalogue.get("Vendor Glucometer"), 20);
/** Three readings of a device, re-sends left out (they store nothing). */
const day = (sender: ReturnType<typeof bpm>) =>
  readingsOf(sender, 5, 0)
    .filter((r) => !r.duplicate)
    .slice(0, 3);
const recordsOf = (readings: ReturnType<typeof day>) => readings.flatMap((r) => r.records).length;
const at = (receiver: Receiver, path: string) =>
  receiver.received.filter((r) => r.path === `/${path}`);

/** Spec 6.3 routing, post_as_array and status metrics, through a real HTTP receiver. */
describe("measurement webhooks: routing and payloads", () => {
  let lab: WebhookLab;
  let receiver: Receiver;
  /** The patient's stored records, as GET reads them. */
  const storedOf = async (externalId: string) =>
    (
      await lab.store.measurements.query({
        accountId: lab.account.id,
        patientExternalId: externalId,
        limit: 100,
      })
    ).rows;
  beforeEach(async () => {
    lab = await WebhookLab.open();
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await lab.close();
    await receiver.close();
  });

  it("sends every device's records to the enabled_by_default webhooks, one POST per record or one array per reading", async () => {
    const single = await lab.webhook({ endpoint: receiver.url("/single") });
    const arrays = await lab.webhook({ endpoint: receiver.url("/arrays"), postAsArray: true });
    const optIn = await lab.webhook({ endpoint: receiver.url("/opt-in"), enabledByDefault: false });
    const a = bpm(1);
    await lab.device(a, "P-A");
    const readings = day(a);
    const stored = await lab.ingest(a, readings);
    expect(stored).toBe(recordsOf(readings));
    await lab.settle();

    const records = expectConsumable(at(receiver, "single"), single) as MeasurementRecordBody[];
    expect(records).toHaveLength(stored);
    const rows = await storedOf("P-A");
    expect(records.map((r) => `${r.metric}@${r.timestamp}`).sort()).toEqual(
      rows.map((m) => `${m.metric}@${toIsoMicros(m.timestamp)}`).sort(),
    );
    for (const r of records) {
      expect(r.patient_id).toBe("P-A");
      expect(r.sensor_code).toBe("10");
      expect(r.created).toBe(r.timestamp);
    }

    // post_as_array: one POST per physical reading, its records together.
    const groups = expectConsumable(at(receiver, "arrays"), arrays) as MeasurementRecordBody[][];
    expect(groups).toHaveLength(readings.length);
    for (const group of groups) {
      expect(new Set(group.map((r) => r.timestamp)).size).toBe(1);
      expect(new Set(group.map((r) => JSON.stringify(r.filter_params))).size).toBe(1);
      expect(group.map((r) => r.metric)).toContain("blood_pressure");
    }
    expect(groups.flat()).toHaveLength(stored);
    // enabled_by_default false: nothing unless a device names it.
    expect(at(receiver, "opt-in")).toEqual([]);
    expect(optIn.enabledByDefault).toBe(false);
  });

  it("measurement_webhook_id sends a device's records to that webhook only; an empty string restores all", async () => {
    const everyone = await lab.webhook({ endpoint: receiver.url("/everyone") });
    const optIn = await lab.webhook({ endpoint: receiver.url("/opt-in"), enabledByDefault: false });
    const named = await lab.webhook({ endpoint: receiver.url("/named") });
    const a = bpm(1);
    const b = bpm(2);
    const deviceA = await lab.device(a, "P-A");
    const deviceB = await lab.device(b, "P-B");
    // As a platform sets it: through hwi-devices/{id}/properties/ (a UUID in any case).
    const route = async (deviceId: string, value: string) => {
      const res = await lab.hwi("PUT", `hwi-devices/${deviceId}/properties/`, {
        key: "measurement_webhook_id",
        value,
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    await route(deviceA.id, optIn.id.toUpperCase());
    await route(deviceB.id, named.id);
    const [r1, r2, r3] = day(a);
    await lab.ingest(a, [r1!]);
    await lab.ingest(b, day(b).slice(0, 1));
    await lab.settle();
    const devices = (path: string) =>
      new Set(
        (expectConsumable(at(receiver, path), everyone) as MeasurementRecordBody[]).map(
          (r) => r.hwi_device_id,
        ),
      );
    // A named an opt-in webhook: it goes there although enabled_by_default is false, and
    // nowhere else; B named a default webhook: only there.
    expect(devices("opt-in")).toEqual(new Set([deviceA.id]));
    expect(devices("named")).toEqual(new Set([deviceB.id]));
    expect(devices("everyone")).toEqual(new Set());

    // Spec 6.3.2: "" restores sending to all webhooks (those enabled by default).
    await route(deviceA.id, "");
    const before = receiver.received.length;
    await lab.ingest(a, [r2!]);
    await lab.settle();
    const fresh = receiver.received.slice(before);
    expect(new Set(fresh.map((r) => r.path))).toEqual(new Set(["/everyone", "/named"]));
    expect(fresh).toHaveLength(2 * r2!.records.length);

    // A device naming a webhook that was deleted since gets no webhook at all (it still names it).
    await route(deviceA.id, optIn.id);
    expect((await lab.hwi("DELETE", `webhooks/${optIn.id}/`)).statusCode).toBe(204);
    const count = receiver.received.length;
    await lab.ingest(a, [r3!]);
    await lab.settle();
    expect(receiver.received.length).toBe(count);

    // So does one naming a webhook made another kind since (PUT/PATCH event).
    const patched = await lab.hwi("PATCH", `webhooks/${named.id}/`, { event: "PATIENT" });
    expect(patched.statusCode, patched.body).toBe(200);
    await lab.ingest(b, day(b).slice(1, 2));
    await lab.settle();
    expect(receiver.received.length).toBe(count);
  });

  it("leaves battery and other status metrics out when the account asks (spec 6.3.3)", async () => {
    const single = await lab.webhook({ endpoint: receiver.url("/single") });
    const arrays = await lab.webhook({ endpoint: receiver.url("/arrays"), postAsArray: true });
    const a = bpm(1);
    await lab.device(a, "P-A");
    await lab.device(glucometer, "P-A");
    const [first, second] = day(a);
    await lab.ingest(a, [first!]);
    await lab.settle();
    const metrics = () =>
      (expectConsumable(at(receiver, "single"), single) as MeasurementRecordBody[]).map(
        (r) => r.metric,
      );
    expect(metrics()).toContain("battery_percentage");

    await lab.store.accounts.update(lab.account.id, { omitStatusMetrics: true });
    receiver.received.length = 0;
    await lab.ingest(a, [second!]);
    const sugar = day(glucometer).slice(0, 2);
    await lab.ingest(glucometer, sugar);
    await lab.settle();
    expect(metrics().length).toBeGreaterThan(0);
    expect(metrics()).not.toContain("battery_percentage");
    expect(metrics()).toContain("glucose");
    const groups = expectConsumable(at(receiver, "arrays"), arrays) as MeasurementRecordBody[][];
    // Still one array per reading, each without its battery record.
    expect(groups).toHaveLength(1 + sugar.length);
    expect(groups.flat().map((r) => r.metric)).not.toContain("battery_percentage");
  });

  it("names the device's gateway as it is now (spec 6.2): a replaced gateway's late readings carry the new one, an unlinked device's null; GET keeps the one they came through", async () => {
    const hook = await lab.webhook({ endpoint: receiver.url("/m"), postAsArray: true });
    const a = bpm(1);
    await lab.device(a, "P-A");
    // Three readings taken now, a minute apart; the gateway relays them one by one, later.
    const [live, late, later] = day(a).map((r, i) => ({
      ...r,
      timestamp: lab.clock.now() + i * MINUTE,
    }));
    await lab.runUntil(lab.clock.now() + HOUR);
    const sent = async (reading: typeof live) => {
      const before = receiver.received.length;
      await lab.ingest(a, [reading!]);
      await lab.settle();
      const [group] = expectConsumable(
        receiver.received.slice(before),
        hook,
      ) as MeasurementRecordBody[][];
      return new Set(group!.map((r) => r.hardware_uuid));
    };
    expect(await sent(live)).toEqual(new Set([a.hardwareUuid]));
    await lab.store.devices.replaceHardware(lab.account.id, a.hardwareUuid, "0F0E0D0C0B0A");
    expect(await sent(late)).toEqual(new Set(["0F0E0D0C0B0A"]));
    await lab.store.devices.unlinkGateway(lab.account.id, "0F0E0D0C0B0A");
    expect(await sent(later)).toEqual(new Set([null]));
    const rows = await storedOf("P-A");
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(new Set(rows.map((m) => m.hardwareUuid))).toEqual(new Set([a.hardwareUuid]));
  });
});
