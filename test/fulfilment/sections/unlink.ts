import { describe, expect, it } from "vitest";
import { fulfilmentWebhookBody } from "../../../src/fulfilment/events.ts";
import { deviceMacAddress } from "../../../src/fulfilment/identifiers.ts";
import { Unlink } from "../../../src/fulfilment/unlink.ts";
import type { Store } from "../../../src/store/store.ts";
import {
  activate,
  catalogue,
  eventsOf,
  type FulfilmentEnv,
  GW,
  GW2,
  IMEI,
  knownGateway,
  patientWithAddress,
  request,
} from "../env.ts";

/** Spec 4.2, 3, 6.2; wire-formats "Unlink". */
export function unlinkSection(env: FulfilmentEnv): void {
  const unlink = (id: string) => env.services.unlink.unlink(env.account.id, id);

  describe("unlink", () => {
    it("repeating an unlink is a 200 that unlinks nothing, also for a gateway the lab never saw", async () => {
      // GW2 never checked in: its device waits for it, and the account has no such gateway.
      await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW2 },
        patient: { external_id: "P-1" },
      });
      expect((await unlink(GW2)).devices).toHaveLength(1);
      env.recorded.length = 0;
      // A client retrying after a lost answer gets a 2xx, and nothing changes.
      expect(await unlink(GW2)).toEqual({ by: "gateway_id", id: GW2, devices: [] });
      expect(env.recorded).toEqual([]);
      // Hardware the account never had stays unknown.
      await expect(unlink("AABBCCDDEEFF")).rejects.toMatchObject({ code: "E_STORE_NOT_FOUND" });
    });

    it("unlinks a request whose box ships while the unlink is under way: hardware_uuid null, off the whitelist", async () => {
      const { device } = await request(env);
      // The warehouse ships it just after the unlink looked the device up (no hardware yet).
      let ship: (() => Promise<unknown>) | undefined = () =>
        env.services.orders.advance(device.id, { status: "Dropshipped" });
      const store: Store = {
        ...env.store,
        devices: {
          ...env.store.devices,
          get: async (...args) => {
            const found = await env.store.devices.get(...args);
            const hook = ship;
            ship = undefined;
            await hook?.();
            return found;
          },
        },
      };
      const racing = new Unlink({ store, catalogue, clock: env.clock, events: env.events });
      const gateway = (await env.services.orders.get(device.id)).hardware_uuid;
      expect(gateway).toBeNull();
      const result = await racing.unlink(env.account.id, device.id);
      const shipped = (await env.services.orders.get(device.id)).hardware_uuid!;
      expect(shipped).toMatch(/^[0-9A-F]{12}$/);
      expect(result.devices.map((d) => [d.device.hardwareUuid, d.previousHardwareUuid])).toEqual([
        [null, shipped],
      ]);
      const after = await env.store.devices.get(env.account.id, device.id);
      expect([after?.status, after?.hardwareUuid]).toEqual(["Unlinked", null]);
      expect(await env.store.whitelist.list(shipped)).toEqual([]);
      const last = eventsOf(env, "fulfilment.status").at(-1)!;
      expect(fulfilmentWebhookBody(last)).toMatchObject({
        status: "Unlinked",
        hardware_uuid: null,
        device_id: shipped,
      });
    });

    it("unlinks a device once when several unlinks of its hwi_device_id run at the same time", async () => {
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      env.recorded.length = 0;
      const results = await Promise.all(Array.from({ length: 4 }, () => unlink(device.id)));
      expect(results.map((r) => r.devices.length).sort()).toEqual([0, 0, 0, 1]);
      expect(eventsOf(env, "fulfilment.status").map((e) => e.status)).toEqual(["Unlinked"]);
    });

    it("unlinks a gateway's devices once when several unlinks of it run at the same time", async () => {
      await knownGateway(env);
      await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      await activate(env, { device: { name: "Vendor Pulse Ox", hardware_uuid: GW } });
      env.recorded.length = 0;
      const results = await Promise.all(Array.from({ length: 6 }, () => unlink(GW)));
      // One of them unlinks both devices; the others find nothing left to unlink.
      expect(results.map((r) => r.devices.length).sort()).toEqual([0, 0, 0, 0, 0, 2]);
      expect(eventsOf(env, "fulfilment.status").map(fulfilmentWebhookBody)).toHaveLength(2);
      const logs = (await env.store.hardwareLogs.list(env.account.id)).rows;
      expect(logs.filter((l) => l.reason === "unlink")).toHaveLength(2);
    });

    it("unlinks every device of a gateway id: hardware_uuid null, Unlinked, logged, whitelist emptied, events", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const { device: ox } = await activate(env, {
        device: { name: "Vendor Pulse Ox", hardware_uuid: GW },
      });
      env.recorded.length = 0;
      const result = await unlink("29-70-56-12-0b-d7");
      expect(result.by).toBe("gateway_id");
      expect(result.id).toBe(GW);
      expect(
        result.devices.map((c) => [
          c.device.id,
          c.previousHardwareUuid,
          c.device.hardwareUuid,
          c.device.status,
        ]),
      ).toEqual([
        [scale.id, GW, null, "Unlinked"],
        [ox.id, GW, null, "Unlinked"],
      ]);
      expect(await env.store.whitelist.list(GW)).toEqual([]);
      const logs = (await env.store.hardwareLogs.list(a)).rows.filter((l) => l.reason === "unlink");
      expect(logs.map((l) => [l.deviceId, l.previousHardwareUuid, l.hardwareUuid])).toEqual([
        [scale.id, GW, null],
        [ox.id, GW, null],
      ]);
      const bodies = eventsOf(env, "fulfilment.status").map(fulfilmentWebhookBody);
      expect(bodies).toEqual([
        expect.objectContaining({
          hwi_device_id: scale.id,
          patient_id: "P-1",
          status: "Unlinked",
          hardware_uuid: null,
          device_id: GW,
        }),
        expect.objectContaining({
          hwi_device_id: ox.id,
          patient_id: null,
          status: "Unlinked",
          hardware_uuid: null,
          device_id: GW,
        }),
      ]);
      expect(eventsOf(env, "whitelist.changed")).toMatchObject([
        {
          gatewayUuid: GW,
          added: [],
          removed: expect.arrayContaining([deviceMacAddress(scale.id), deviceMacAddress(ox.id)]),
        },
      ]);
      // The gateway stays the account's: gateway-info answers, and repeating changes nothing.
      expect((await env.services.gateways.info(a, GW)).whitelisted_devices).toEqual([]);
      env.recorded.length = 0;
      expect(await unlink(GW)).toEqual({ by: "gateway_id", id: GW, devices: [] });
      expect(env.recorded).toEqual([]);
    });

    it("unlinks one device by hwi_device_id and leaves the others on the gateway", async () => {
      await knownGateway(env);
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const { device: ox } = await activate(env, {
        device: { name: "Vendor Pulse Ox", hardware_uuid: GW },
      });
      const result = await unlink(scale.id.toUpperCase());
      expect(result).toMatchObject({
        by: "hwi_device_id",
        id: scale.id,
        devices: [{ previousHardwareUuid: GW }],
      });
      expect((await env.store.devices.get(env.account.id, ox.id))?.hardwareUuid).toBe(GW);
      expect((await env.store.whitelist.list(GW)).map((w) => w.macAddress)).toEqual([
        deviceMacAddress(ox.id),
      ]);
      expect(eventsOf(env, "fulfilment.status")).toMatchObject([
        { device: { id: scale.id }, status: "Unlinked", previousHardwareUuid: GW },
      ]);
      expect((await unlink(scale.id)).devices).toEqual([]);
      expect(eventsOf(env, "fulfilment.status")).toHaveLength(1);
    });

    it("unlinks a direct-cellular device by IMEI, and a pending request without a log", async () => {
      const a = env.account.id;
      const { device: cell } = await activate(env, {
        device: { name: "Vendor Cellular BPM", hardware_uuid: IMEI },
      });
      expect((await unlink(IMEI)).devices.map((c) => c.device.id)).toEqual([cell.id]);
      await patientWithAddress(env, "P-1");
      const { device: pending } = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-1" },
      });
      const result = await unlink(pending.id);
      expect(result.devices).toMatchObject([
        { previousHardwareUuid: null, device: { status: "Unlinked" } },
      ]);
      const logs = (await env.store.hardwareLogs.list(a, { deviceId: pending.id })).rows;
      expect(logs).toEqual([]);
    });

    it("answers not found for an id it cannot place", async () => {
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      const { device } = await env.services.activation.activate(other.id, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      for (const id of [
        device.id,
        GW,
        "123456789012345",
        "banana",
        "e9c24a26-7d69-490f-9546-93c5a31486aa",
      ]) {
        await expect(unlink(id)).rejects.toMatchObject({ code: "E_STORE_NOT_FOUND" });
      }
      expect((await env.store.devices.get(other.id, device.id))?.hardwareUuid).toBe(GW);
    });
  });
}
