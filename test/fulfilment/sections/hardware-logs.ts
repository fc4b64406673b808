import { describe, expect, it } from "vitest";
import { activate, type FulfilmentEnv, GW, knownGateway, T0 } from "../env.ts";

/** hwi-hardware-uuid-logs (spec 4.3; record fields not shown, rpmlab's choice). */
export function hardwareLogsSection(env: FulfilmentEnv): void {
  describe("hardware uuid logs", () => {
    it("lists every hardware_uuid change of the account, oldest first, filterable by device", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const { device: ox } = await activate(env, {
        device: { name: "Vendor Pulse Ox", hardware_uuid: GW },
      });
      await env.services.unlink.unlink(a, scale.id);
      const { rows, total } = await env.services.hardwareLogs.list(a, {}, { count: true });
      expect(total).toBe(3);
      expect(rows).toEqual([
        {
          id: expect.any(Number),
          hwi_device_id: scale.id,
          previous_hardware_uuid: null,
          hardware_uuid: GW,
          reason: "activation",
          created: T0,
        },
        {
          id: expect.any(Number),
          hwi_device_id: ox.id,
          previous_hardware_uuid: null,
          hardware_uuid: GW,
          reason: "activation",
          created: T0 + 1000,
        },
        {
          id: expect.any(Number),
          hwi_device_id: scale.id,
          previous_hardware_uuid: GW,
          hardware_uuid: null,
          reason: "unlink",
          created: T0 + 2000,
        },
      ]);
      const mine = await env.services.hardwareLogs.list(a, { hwiDeviceId: ox.id });
      expect(mine.rows.map((r) => r.reason)).toEqual(["activation"]);
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      expect((await env.services.hardwareLogs.list(other.id)).rows).toEqual([]);
    });
  });
}
