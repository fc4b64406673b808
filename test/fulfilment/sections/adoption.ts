import { describe, expect, it } from "vitest";
import { deviceMacAddress } from "../../../src/fulfilment/identifiers.ts";
import { activate, eventsOf, type FulfilmentEnv, GW, orphan } from "../env.ts";

/** wire-formats "Unknown Gateway ID": how such a gateway becomes associated. */
export function adoptionSection(env: FulfilmentEnv): void {
  describe("gateway adoption", () => {
    it("turns Unknown Gateway ID devices Active when the gateway shows up, with their readings", async () => {
      const a = env.account.id;
      const { device: bpm } = await activate(env, {
        device: { name: "Vendor BPM - S", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      // Readings arrive before the lab adopts: ingestion keeps them as orphans.
      await env.store.measurements.insertMany([
        orphan(),
        orphan({ sensorCode: "34", metric: "weight", source: "S" }),
      ]);
      env.recorded.length = 0;
      const result = await env.services.adoption.register(GW.toLowerCase(), {
        lastSignalStrength: 20,
        lastCheckinTime: env.clock.now(),
      });
      expect(result.accountId).toBe(a);
      expect(result.adopted.map((d) => [d.id, d.status])).toEqual([
        [bpm.id, "Active"],
        [scale.id, "Active"],
      ]);
      const info = await env.services.gateways.info(a, GW);
      expect(info.whitelisted_devices.map((w) => w.mac_address).sort()).toEqual(
        [deviceMacAddress(bpm.id), deviceMacAddress(scale.id)].sort(),
      );
      expect(info.last_signal_strength).toBe(20);
      const readings = await env.store.measurements.query({
        accountId: a,
        deviceId: bpm.id,
        limit: 5,
      });
      expect(readings.rows).toMatchObject([{ metric: "pulse", patientExternalId: "P-1" }]);
      expect(eventsOf(env, "device.activated")).toMatchObject([
        { device: { id: bpm.id }, gatewayKnown: true, orphansAttached: 1 },
        { device: { id: scale.id }, gatewayKnown: true, orphansAttached: 1 },
      ]);
      // Adopting again finds nothing left waiting.
      expect((await env.services.adoption.adopt(GW)).adopted).toEqual([]);
    });

    it("adopts for a batch's gateways at once, each gateway's devices once and in order", async () => {
      const second = "0A1B2C3D4E5F";
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const { device: bpm } = await activate(env, {
        device: { name: "Vendor BPM - S", hardware_uuid: second },
      });
      const { device: oximeter } = await activate(env, {
        device: { name: "Vendor Pulse Ox", hardware_uuid: GW },
      });
      // Ingestion has stored both check-ins: the gateways are known, their devices still wait.
      await env.store.gateways.updateStatus(GW, { lastSignalStrength: 12 });
      await env.store.gateways.updateStatus(second, { lastSignalStrength: 18 });
      env.recorded.length = 0;
      const results = await env.services.adoption.adoptAll([GW, second.toLowerCase(), GW]);
      expect(results.map((r) => [r.gatewayUuid, r.adopted.map((d) => d.id)])).toEqual([
        [GW, [scale.id, oximeter.id]],
        [second, [bpm.id]],
        [GW, []],
      ]);
      expect(results.map((r) => r.accountId)).toEqual([env.account.id, env.account.id, null]);
      expect(eventsOf(env, "device.activated").map((e) => e.device.id)).toEqual([
        scale.id,
        oximeter.id,
        bpm.id,
      ]);
    });

    it("gives the gateway to the account of the earliest waiting device only", async () => {
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      const { device: mine } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const theirs = await env.services.activation.activate(other.id, {
        device: { name: "Vendor Pulse Ox", hardware_uuid: GW },
      });
      const result = await env.services.adoption.register(GW);
      expect(result.adopted.map((d) => d.id)).toEqual([mine.id]);
      expect((await env.store.devices.get(other.id, theirs.device.id))?.status).toBe(
        "Unknown Gateway ID",
      );
      await expect(env.services.gateways.info(other.id, GW)).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
    });

    it("does nothing for a gateway the lab has not seen", async () => {
      await activate(env, { device: { name: "Vendor Scale", hardware_uuid: GW } });
      expect(await env.services.adoption.adopt(GW)).toEqual({
        gatewayUuid: GW,
        accountId: null,
        adopted: [],
        crowdedOut: [],
      });
    });

    it("confirms a whitelisted device when the gateway reports it (RE → CO)", async () => {
      await env.services.adoption.register(GW);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const mac = deviceMacAddress(device.id);
      env.clock.runSync({ until: env.clock.now() + 60_000 });
      const confirmed = await env.services.adoption.confirmWhitelisted(GW, mac.toLowerCase());
      expect(confirmed).toMatchObject({ macAddress: mac, whitelistStatus: "CO" });
      expect(confirmed!.modified).toBeGreaterThan(confirmed!.created);
      expect(await env.services.adoption.confirmWhitelisted(GW, "C00000000000")).toBeNull();
    });
  });
}
