import { describe, expect, it } from "vitest";
import { fulfilmentWebhookBody } from "../../../src/fulfilment/events.ts";
import {
  activate,
  advance,
  DAY,
  drive,
  eventsOf,
  type FulfilmentEnv,
  GW,
  IMEI,
  knownGateway,
  startSimulator,
  T0,
  useConfig,
} from "../env.ts";

/** Issue 4 §2 "Other": replacement orders move through shipment statuses too. */
export function replacementOrdersSection(env: FulfilmentEnv): void {
  describe("replacement orders", () => {
    it("a device activated on a gateway id replaced twice goes on the latest replacement gateway", async () => {
      // Spec 4.3: each replacement gateway takes the devices of the one before (README "Devices").
      const a = env.account.id;
      const sim = await startSimulator(env);
      await knownGateway(env);
      const { device: bpm } = await activate(env, {
        device: { name: "Vendor BPM - S", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const replace = () =>
        env.services.replacements.create(a, {
          hwi_device_id: bpm.id,
          device_types: [{ name: "Gateway" }],
        });
      await replace();
      await drive(env, sim, T0 + 30 * DAY);
      await replace();
      await drive(env, sim, T0 + 60 * DAY);
      const newest = (await env.store.devices.get(a, bpm.id))!.hardwareUuid;
      expect(
        eventsOf(env, "replacement.status").filter((e) => e.status === "Delivered"),
      ).toHaveLength(2);
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      expect(scale.hardwareUuid).toBe(newest);
      expect(newest).not.toBe(GW);
    });

    it("moves a gateway replacement to Delivered: replacement.status events, Replaced at Dropshipped, special-order dates", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      await knownGateway(env);
      const { device: bpm } = await activate(env, {
        device: { name: "Vendor BPM - S", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      env.recorded.length = 0;
      const replacement = await env.services.replacements.create(a, {
        hwi_device_id: bpm.id,
        device_types: [{ name: "Gateway" }],
      });
      await drive(env, sim, T0 + 30 * DAY);

      const statuses = eventsOf(env, "replacement.status").map((e) => e.status);
      expect(statuses[0]).toBe("Ready to Ship");
      expect(statuses[1]).toBe("Dropshipped");
      expect(statuses.at(-2)).toBe("Out for Delivery");
      expect(statuses.at(-1)).toBe("Delivered");
      expect(statuses.slice(2, -2).every((s) => s === "In Transit")).toBe(true);

      const record = await env.services.replacements.get(a, replacement.id);
      const shipped = eventsOf(env, "replacement.status").find((e) => e.status === "Dropshipped")!;
      const delivered = eventsOf(env, "replacement.status").at(-1)!;
      expect(record).toMatchObject({
        status: "Delivered",
        created_on: T0 + 2000,
        shipped_on: shipped.at,
        delivered_on: delivered.at,
        previous_hardware_uuid: GW,
      });
      expect(record.tracking_link).toMatch(/^https:\/\/tracking\.rpmlab\.test\//);
      expect(delivered.replacement).toMatchObject({
        shippedOn: shipped.at,
        deliveredOn: delivered.at,
        trackingLink: record.tracking_link,
      });
      const fresh = record.new_hardware_uuid!;
      expect(fresh).toMatch(/^[0-9A-F]{12}$/);

      // Replaced fires once per device, at Dropshipped, with device_id = the old gateway.
      const replaced = eventsOf(env, "fulfilment.status");
      expect(replaced.map(fulfilmentWebhookBody)).toEqual([
        expect.objectContaining({
          hwi_device_id: bpm.id,
          status: "Replaced",
          device_id: GW,
          hardware_uuid: fresh,
        }),
        expect.objectContaining({
          hwi_device_id: scale.id,
          status: "Replaced",
          device_id: GW,
          hardware_uuid: fresh,
        }),
      ]);
      expect(replaced.every((e) => e.at === shipped.at)).toBe(true);
      expect(replaced.every((e) => e.trackingLink === record.tracking_link)).toBe(true);
      // The device records are kept; Replaced while the box travels (replacement-shipping),
      // Active again once the new gateway is with the patient (README "Fulfilment").
      for (const id of [bpm.id, scale.id]) {
        expect((await env.store.devices.get(a, id))?.status).toBe("Active");
        expect(await env.services.views.get(a, id)).toMatchObject({ status: "Active" });
      }
      expect(eventsOf(env, "hardware.delivered")).toMatchObject([
        {
          kind: "replacement",
          orderId: replacement.id,
          gatewayUuid: fresh,
          devices: [
            { id: bpm.id, status: "Active" },
            { id: scale.id, status: "Active" },
          ],
        },
      ]);
      // Billing carries on through a replacement: still the activation's period.
      expect(await env.store.billingPeriods.list({ accountId: a })).toMatchObject([
        { deviceId: bpm.id, ended: null, basis: "activation" },
        { deviceId: scale.id, ended: null, basis: "activation" },
      ]);
    });

    it("a direct-cellular device replaced by a new unit is Replaced in transit, Active once delivered", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Cellular BPM", hardware_uuid: IMEI },
        patient: { external_id: "P-1" },
      });
      await env.services.replacements.create(a, {
        hwi_device_id: device.id,
        device_types: [{ name: "Vendor Cellular BPM" }],
      });
      await drive(env, sim, T0 + 30 * DAY);
      const statuses = eventsOf(env, "fulfilment.status").map((e) => [e.status, e.device.status]);
      expect(statuses).toEqual([["Replaced", "Replaced"]]);
      expect(await env.services.views.get(a, device.id)).toMatchObject({ status: "Active" });
      expect(eventsOf(env, "hardware.delivered")).toMatchObject([
        { devices: [{ id: device.id, status: "Active" }], replacedUnits: [device.id] },
      ]);
    });

    it("a replacement held for pickup and collected reads delivered_on from the pickup (status stays Available for Pickup, no event)", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const replacement = await env.services.replacements.create(a, {
        hwi_device_id: device.id,
        device_types: [{ name: "Vendor Scale" }],
      });
      await env.services.orders.advance(replacement.id, { status: "Available for Pickup" });
      expect(await env.services.replacements.get(a, replacement.id)).toMatchObject({
        status: "Available for Pickup",
        delivered_on: null,
      });
      advance(env, DAY);
      env.recorded.length = 0;
      await env.services.orders.inject(replacement.id, { event: "picked_up" });
      expect(await env.services.replacements.get(a, replacement.id)).toMatchObject({
        status: "Available for Pickup",
        delivered_on: env.clock.now(),
      });
      // Spec 6.2: a carrier-held package fires Available for Pickup; its collection fires nothing.
      expect(eventsOf(env, "replacement.status")).toEqual([]);
    });

    it("puts a replacement On Hold on a stock shortage, and cancels a pending one (removed)", async () => {
      useConfig(env, { probabilities: { stock_shortage: 1 } });
      const a = env.account.id;
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const replacement = await env.services.replacements.create(a, {
        hwi_device_id: device.id,
        device_types: [{ name: "Vendor Scale" }],
      });
      expect(replacement.status).toBe("On Hold");
      const gone = await env.services.orders.advance(replacement.id, { status: "Cancelled" });
      expect(gone).toMatchObject({ kind: "replacement", removed: true });
      expect(eventsOf(env, "replacement.status").map((e) => e.status)).toEqual([
        "On Hold",
        "Cancelled",
      ]);
      expect(await env.store.replacements.get(a, replacement.id)).toBeNull();
      expect((await env.store.devices.get(a, device.id))?.status).toBe("Active");
    });
  });
}
