import { describe, expect, it } from "vitest";
import { deviceMacAddress } from "../../../src/fulfilment/identifiers.ts";
import {
  activate,
  advance,
  DAY,
  type FulfilmentEnv,
  fieldErrors,
  GW,
  GW2,
  knownGateway,
  T0,
} from "../env.ts";

/** Spec 2.2, 2.3, 4.2: hwi-gateways and gateway-info. */
export function gatewaysSection(env: FulfilmentEnv): void {
  describe("gateways", () => {
    it("answers gateway-info once associated: any case, hyphens stripped, whitelisted devices", async () => {
      const a = env.account.id;
      await env.store.gateways.updateStatus(GW, {
        lastSignalStrength: 22,
        lastCheckinTime: T0 - 1000,
        firmwareVersion: "2.1.0",
        bootloaderVersion: "1.0.3",
        provisioned: true,
      });
      await expect(env.services.gateways.info(a, GW)).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const info = await env.services.gateways.info(a, "29-70-56-12-0b-d7");
      expect(info).toEqual({
        gateway_uuid: GW,
        firmware_version: "2.1.0",
        bootloader_version: "1.0.3",
        provisioned: true,
        last_signal_strength: 22,
        last_checkin_time: T0 - 1000,
        assigned_on: T0,
        shipped_on: null,
        whitelisted_devices: [
          {
            sensor_code: "34",
            mac_address: deviceMacAddress(device.id),
            whitelist_status: "RE",
            created: T0,
            modified: T0,
          },
        ],
        properties: [],
      });
      expect(info.whitelisted_devices[0]?.mac_address).toMatch(/^[0-9A-F]{12}$/);
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      await expect(env.services.gateways.info(other.id, GW)).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
      await expect(env.services.gateways.info(a, "not-a-gateway")).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
    });

    it("lists the account's gateways with ordering and the isnull filters", async () => {
      const a = env.account.id;
      await knownGateway(env, GW);
      await knownGateway(env, GW2);
      await activate(env, { device: { name: "Vendor Scale", hardware_uuid: GW } });
      await activate(env, { device: { name: "Vendor Scale", hardware_uuid: GW2 } });
      await env.store.gateways.recordMeasurement(GW2, T0 + DAY);
      await env.store.gateways.setShipped(GW, T0 - DAY);
      advance(env, 1000);
      const uuids = async (query: Record<string, string>) =>
        (await env.services.gateways.list(a, query)).rows.map((g) => g.gateway_uuid);
      expect(await uuids({ ordering: "assigned_on" })).toEqual([GW, GW2]);
      expect(await uuids({ ordering: "-assigned_on" })).toEqual([GW2, GW]);
      expect(await uuids({ ordering: "-last_measurement" })).toEqual([GW, GW2]);
      expect(await uuids({ last_measurement__isnull: "true" })).toEqual([GW]);
      expect(await uuids({ last_measurement__isnull: "False" })).toEqual([GW2]);
      expect(await uuids({ shipped_on__isnull: "false" })).toEqual([GW]);
      const [item] = (await env.services.gateways.list(a, { shipped_on__isnull: "0" })).rows;
      expect(item).toEqual({
        gateway_uuid: GW,
        last_signal_strength: 18,
        last_measurement: null,
        shipped_on: T0 - DAY,
        assigned_on: T0,
      });
      const counted = await env.services.gateways.list(a, {}, { count: true, limit: 1 });
      expect([counted.total, counted.rows.length]).toEqual([2, 1]);
    });

    it("refuses an unknown ordering or a non-boolean isnull, keyed by the parameter", async () => {
      const list = (query: Record<string, string>) =>
        env.services.gateways.list(env.account.id, query);
      expect(await fieldErrors(list({ ordering: "created" }))).toEqual({
        ordering: [
          '"created" is not a valid ordering. Choose one of assigned_on, shipped_on, last_measurement, prefixed with "-" for descending order.',
        ],
      });
      expect(
        await fieldErrors(list({ ordering: "--assigned_on", shipped_on__isnull: "maybe" })),
      ).toEqual({
        ordering: [expect.any(String)],
        shipped_on__isnull: ["Must be a valid boolean."],
      });
    });
  });
}
