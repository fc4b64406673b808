import { describe, expect, it } from "vitest";
import { fulfilmentWebhookBody } from "../../../src/fulfilment/events.ts";
import { deviceMacAddress } from "../../../src/fulfilment/identifiers.ts";
import { shipmentRng } from "../../../src/fulfilment/shipment-plan.ts";
import {
  activate,
  eventsOf,
  type FulfilmentEnv,
  fieldErrors,
  GW,
  GW2,
  IMEI,
  knownGateway,
  patientWithAddress,
  T0,
} from "../env.ts";

/** Spec 3 "gateway replaced → Replaced", 4.3, 6.2: what happens when a replacement ships. */
export function replacementShippingSection(env: FulfilmentEnv): void {
  const ship = (id: string, opts?: { hardwareUuid?: string }) =>
    env.services.replacementShipping.ship(env.account.id, id, opts);

  describe("replacement shipping", () => {
    it("moves every device of the old gateway to a new gateway id: logged, Replaced events, whitelist moved", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device: bpm } = await activate(env, {
        device: { name: "Vendor BPM - S", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const replacement = await env.services.replacements.create(a, {
        hwi_device_id: bpm.id,
        device_types: [{ name: "Gateway" }],
      });
      env.recorded.length = 0;
      const shippedAt = env.clock.now();
      const shipped = await ship(replacement.id);
      const fresh = shipped.newHardwareUuid!;
      expect(fresh).toMatch(/^[0-9A-F]{12}$/);
      expect(fresh).not.toBe(GW);
      expect(
        shipped.changes.map((c) => [
          c.device.id,
          c.previousHardwareUuid,
          c.device.hardwareUuid,
          c.device.status,
        ]),
      ).toEqual([
        [bpm.id, GW, fresh, "Replaced"],
        [scale.id, GW, fresh, "Replaced"],
      ]);
      expect(shipped.replacement).toMatchObject({
        status: "Dropshipped",
        newHardwareUuid: fresh,
        previousHardwareUuid: GW,
      });
      // The new gateway is the account's, shipped now; the devices are whitelisted there.
      const info = await env.services.gateways.info(a, fresh);
      expect(info).toMatchObject({ shipped_on: shippedAt, assigned_on: shippedAt });
      expect(
        info.whitelisted_devices.map((w) => [w.mac_address, w.whitelist_status]).sort(),
      ).toEqual(
        [
          [deviceMacAddress(bpm.id), "RE"],
          [deviceMacAddress(scale.id), "RE"],
        ].sort(),
      );
      expect(await env.store.whitelist.list(GW)).toEqual([]);
      const logs = (await env.store.hardwareLogs.list(a)).rows.filter(
        (l) => l.reason === "replacement",
      );
      expect(logs.map((l) => [l.deviceId, l.previousHardwareUuid, l.hardwareUuid])).toEqual([
        [bpm.id, GW, fresh],
        [scale.id, GW, fresh],
      ]);
      expect(eventsOf(env, "fulfilment.status").map(fulfilmentWebhookBody)).toEqual([
        expect.objectContaining({
          hwi_device_id: bpm.id,
          patient_id: "P-1",
          status: "Replaced",
          hardware_uuid: fresh,
          device_id: GW,
        }),
        expect.objectContaining({
          hwi_device_id: scale.id,
          patient_id: null,
          status: "Replaced",
          hardware_uuid: fresh,
          device_id: GW,
        }),
      ]);
      expect(eventsOf(env, "replacement.status")).toMatchObject([{ status: "Dropshipped" }]);
      await expect(ship(replacement.id)).rejects.toMatchObject({ code: "E_STORE_CONFLICT" });
    });

    it("puts a device activated on the old gateway id once the replacement shipped on the replacement gateway, with the others", async () => {
      // Spec 4.3: a replacement gateway updates hardware_uuid on every device of the old one.
      const a = env.account.id;
      await knownGateway(env);
      const { device: bpm } = await activate(env, {
        device: { name: "Vendor BPM - S", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const replacement = await env.services.replacements.create(a, {
        hwi_device_id: bpm.id,
        device_types: [{ name: "Gateway" }],
      });
      const fresh = (await ship(replacement.id)).newHardwareUuid!;
      // The client still knows the patient's gateway by its old id (lower case, hyphens too).
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: "2970-5612-0bd7" },
        patient: { external_id: "P-1" },
      });
      expect(scale).toMatchObject({ hardwareUuid: fresh, status: "Active" });
      expect((await env.store.whitelist.list(fresh)).map((w) => w.macAddress).sort()).toEqual(
        [deviceMacAddress(bpm.id), deviceMacAddress(scale.id)].sort(),
      );
      expect(await env.store.whitelist.list(GW)).toEqual([]);
    });

    it("a device ordered for a patient whose gateway is being replaced ends on the replacement gateway, whichever box ships first", async () => {
      // Spec 4.3: the replacement gateway takes every device of the old one.
      const a = env.account.id;
      await knownGateway(env);
      await patientWithAddress(env, "P-1");
      const { device: bpm } = await activate(env, {
        device: { name: "Vendor BPM - S", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const replace = () =>
        env.services.replacements.create(a, {
          hwi_device_id: bpm.id,
          device_types: [{ name: "Gateway" }],
        });
      const order = (name: string) =>
        activate(env, { device: { name }, patient: { external_id: "P-1" } });
      // The order ships first: it joins the old gateway, and moves with it.
      const first = await replace();
      const { device: scale } = await order("Vendor Scale");
      await env.services.orders.advance(scale.id, { status: "Dropshipped" });
      expect((await env.store.devices.get(a, scale.id))?.hardwareUuid).toBe(GW);
      const fresh = (await ship(first.id)).newHardwareUuid!;
      expect((await env.store.devices.get(a, scale.id))?.hardwareUuid).toBe(fresh);
      // The replacement has shipped: the next order joins the replacement gateway.
      const { device: ox } = await order("Vendor Pulse Ox");
      await env.services.orders.advance(ox.id, { status: "Dropshipped" });
      expect((await env.store.devices.get(a, ox.id))?.hardwareUuid).toBe(fresh);
      expect((await env.store.whitelist.list(fresh)).map((w) => w.macAddress).sort()).toEqual(
        [bpm.id, scale.id, ox.id].map(deviceMacAddress).sort(),
      );
    });

    it("draws the new gateway id from the shipment's Rng (forked by replacement id and step)", async () => {
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const r = await env.services.replacements.create(env.account.id, {
        hwi_device_id: device.id,
        device_types: [{ name: "Gateway" }],
      });
      const shipped = await ship(r.id);
      // Opened at step 0; shipping is the first transition, step 1.
      const rng = shipmentRng(env.config, r.id, 1).fork("hardware");
      expect(shipped.newHardwareUuid).toBe(rng.hex(12));
    });

    it("ships onto an imposed gateway id, and changes no id for a device-only replacement", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const deviceOnly = await env.services.replacements.create(a, {
        hwi_device_id: device.id,
        device_types: [{ name: "Vendor Scale" }],
      });
      const same = await ship(deviceOnly.id);
      expect(same).toMatchObject({ newHardwareUuid: null, changes: [] });
      expect((await env.store.devices.get(a, device.id))?.hardwareUuid).toBe(GW);
      expect(eventsOf(env, "fulfilment.status")).toEqual([]);
      const withGateway = await env.services.replacements.create(a, {
        hwi_device_id: device.id,
        device_types: [{ name: "Gateway" }],
      });
      const imposed = await ship(withGateway.id, { hardwareUuid: "aa-bb-cc-dd-ee-ff" });
      expect(imposed.newHardwareUuid).toBe("AABBCCDDEEFF");
      expect((await env.store.devices.get(a, device.id))?.hardwareUuid).toBe("AABBCCDDEEFF");
    });

    it("refuses to ship, as a replacement, a gateway already out there: the one it replaces, or one shipped before", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      await knownGateway(env, GW2);
      await env.store.gateways.associate(a, GW2, env.clock.now());
      await env.store.gateways.setShipped(GW2, T0);
      const r = await env.services.replacements.create(a, {
        hwi_device_id: device.id,
        device_types: [{ name: "Gateway" }],
      });
      for (const gateway of [GW, GW2]) {
        expect(await fieldErrors(ship(r.id, { hardwareUuid: gateway }))).toEqual({
          hardware_uuid: [expect.stringContaining("is already out there")],
        });
      }
      // Nothing moved: the device, the gateways and the replacement are as they were.
      expect((await env.store.devices.get(a, device.id))?.hardwareUuid).toBe(GW);
      expect((await env.store.gateways.get(GW2))?.shippedOn).toBe(T0);
      expect((await env.store.replacements.get(a, r.id))?.status).toBe("Ready to Ship");
      expect(eventsOf(env, "fulfilment.status")).toEqual([]);
    });

    it("gives a replaced direct-cellular device a new IMEI", async () => {
      const { device } = await activate(env, {
        device: { name: "Vendor Cellular BPM", hardware_uuid: IMEI },
      });
      const r = await env.services.replacements.create(env.account.id, {
        hwi_device_id: device.id,
        device_types: [{ name: "Vendor Cellular BPM" }],
      });
      const shipped = await ship(r.id);
      expect(shipped.newHardwareUuid).toMatch(/^35\d{13}$/);
      expect(shipped.changes).toMatchObject([
        { previousHardwareUuid: IMEI, device: { status: "Replaced" } },
      ]);
      expect(eventsOf(env, "fulfilment.status").map(fulfilmentWebhookBody)).toMatchObject([
        { status: "Replaced", device_id: IMEI, hardware_uuid: shipped.newHardwareUuid },
      ]);
    });

    it("one gateway replacement on order at a time: a second, once the first is delivered, moves the devices off the first's gateway", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const order = () =>
        env.services.replacements.create(a, {
          hwi_device_id: device.id,
          device_types: [{ name: "Gateway" }],
        });
      const first = await order();
      // Both boxes would ship, the second moving the devices off the first's gateway: refused.
      await expect(order()).rejects.toMatchObject({
        code: "E_API_VALIDATION",
        message: expect.stringContaining("a second one is a duplicate order"),
      });
      const one = (await ship(first.id)).newHardwareUuid!;
      await env.services.orders.advance(first.id, { status: "Delivered" });
      const second = await order();
      env.recorded.length = 0;
      const shipped = await ship(second.id);
      const two = shipped.newHardwareUuid!;
      expect(two).not.toBe(one);
      expect(shipped.changes.map((c) => [c.device.id, c.previousHardwareUuid])).toEqual([
        [device.id, one],
      ]);
      expect(shipped.replacement).toMatchObject({
        previousHardwareUuid: one,
        newHardwareUuid: two,
      });
      expect((await env.store.devices.get(a, device.id))?.hardwareUuid).toBe(two);
      expect(eventsOf(env, "fulfilment.status").map(fulfilmentWebhookBody)).toMatchObject([
        { status: "Replaced", patient_id: "P-1", device_id: one, hardware_uuid: two },
      ]);
    });

    it("never moves another patient's device: unlinking the device halts its pending replacement", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device: first } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const r = await env.services.replacements.create(a, {
        hwi_device_id: first.id,
        device_types: [{ name: "Gateway" }],
      });
      await env.services.unlink.unlink(a, GW);
      // The gateway id goes to another patient.
      const { device: other } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-2" },
      });
      env.recorded.length = 0;
      await expect(ship(r.id)).rejects.toMatchObject({
        code: "E_API_VALIDATION",
        message: expect.stringContaining("its device was unlinked"),
      });
      expect((await env.store.devices.get(a, other.id))?.hardwareUuid).toBe(GW);
      expect((await env.store.devices.get(a, first.id))?.hardwareUuid).toBeNull();
      expect(eventsOf(env, "fulfilment.status")).toEqual([]);
      expect((await env.store.shipments.get(r.id))?.halted).toBe("unlinked");
    });

    it("answers not found for a replacement of another account", async () => {
      await expect(ship("e9c24a26-7d69-490f-9546-93c5a31486aa")).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
    });
  });
}
