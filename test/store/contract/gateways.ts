import { describe, expect, it } from "vitest";
import type { GatewayOrdering } from "../../../src/store/types-hardware.ts";
import { advance, type ContractEnv, DAY, expectCode, newAccount, T0 } from "./env.ts";

/** Spec 2.2, 2.3, 4.2: gateways, health, ordering and filters, whitelist. */
export function gatewaysContract(env: ContractEnv): void {
  describe("gateways", () => {
    it("keeps unassociated gateways out of gateway-info until associated", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      expect(await env.store.gateways.get("FED091A643FF")).toBeNull();
      const reported = await env.store.gateways.updateStatus("FED091A643FF", {
        lastSignalStrength: 17,
        lastCheckinTime: T0,
        firmwareVersion: "2.1.0",
        bootloaderVersion: "1.0.3",
        provisioned: true,
      });
      expect(reported).toMatchObject({
        gatewayUuid: "FED091A643FF",
        accountId: null,
        lastSignalStrength: 17,
        lastCheckinTime: T0,
        firmwareVersion: "2.1.0",
        bootloaderVersion: "1.0.3",
        provisioned: true,
        lastMeasurement: null,
        shippedOn: null,
        assignedOn: null,
        properties: [],
      });
      expect(await env.store.gateways.getForAccount(a.id, "FED091A643FF")).toBeNull();
      advance(env, 1000);
      const assigned = await env.store.gateways.associate(a.id, "fed091a643ff");
      expect(assigned).toMatchObject({
        gatewayUuid: "FED091A643FF",
        accountId: a.id,
        assignedOn: T0 + 1000,
      });
      expect(await env.store.gateways.getForAccount(a.id, "fEd091A643fF")).toEqual(assigned);
      expect(await env.store.gateways.getForAccount(b.id, "FED091A643FF")).toBeNull();
      // Associating again with the same account changes nothing; another account conflicts.
      expect(await env.store.gateways.associate(a.id, "FED091A643FF", T0 + 5)).toEqual(assigned);
      await expectCode(env.store.gateways.associate(b.id, "FED091A643FF"), "E_STORE_CONFLICT");
    });

    it("takes signal strength 0 to 30 only, and keeps fields not reported", async () => {
      await env.store.gateways.updateStatus("G1", { lastSignalStrength: 30, firmwareVersion: "1" });
      await env.store.gateways.updateStatus("G1", { lastSignalStrength: 0 });
      for (const bad of [31, -1, 2.5, Number.NaN]) {
        await expectCode(
          env.store.gateways.updateStatus("G1", { lastSignalStrength: bad }),
          "E_STORE_INVALID",
        );
      }
      expect(await env.store.gateways.get("g1")).toMatchObject({
        lastSignalStrength: 0,
        firmwareVersion: "1",
        provisioned: false,
      });
    });

    it("keeps the latest last_measurement when readings arrive out of order", async () => {
      await env.store.gateways.recordMeasurement("G1", T0 + 10);
      await env.store.gateways.recordMeasurement("g1", T0 + 5);
      expect((await env.store.gateways.get("G1"))?.lastMeasurement).toBe(T0 + 10);
      await env.store.gateways.recordMeasurement("G1", T0 + 20);
      expect((await env.store.gateways.get("G1"))?.lastMeasurement).toBe(T0 + 20);
    });

    it("orders like Django on PostgreSQL: nulls last ascending, first descending", async () => {
      const a = await newAccount(env);
      // name: [assigned_on offset, shipped_on, last_measurement]
      const gateways: [string, number, number | null, number | null][] = [
        ["G1", 3, T0 + 2 * DAY, null],
        ["G2", 1, null, T0 + 5],
        ["G3", 2, T0 + DAY, T0 + 9],
        ["G4", 4, null, null],
      ];
      for (const [uuid, assigned, shipped, last] of gateways) {
        await env.store.gateways.associate(a.id, uuid, T0 + assigned);
        if (shipped !== null) await env.store.gateways.setShipped(uuid, shipped);
        if (last !== null) await env.store.gateways.recordMeasurement(uuid, last);
      }
      await env.store.gateways.associate((await newAccount(env)).id, "G9", T0);
      const order = async (ordering: GatewayOrdering) =>
        (await env.store.gateways.list(a.id, { ordering })).rows.map((g) => g.gatewayUuid);
      expect(await order("assigned_on")).toEqual(["G2", "G3", "G1", "G4"]);
      expect(await order("-assigned_on")).toEqual(["G4", "G1", "G3", "G2"]);
      expect(await order("shipped_on")).toEqual(["G3", "G1", "G2", "G4"]);
      expect(await order("-shipped_on")).toEqual(["G2", "G4", "G1", "G3"]);
      expect(await order("last_measurement")).toEqual(["G2", "G3", "G1", "G4"]);
      expect(await order("-last_measurement")).toEqual(["G1", "G4", "G3", "G2"]);
      await expectCode(
        env.store.gateways.list(a.id, { ordering: "created" as GatewayOrdering }),
        "E_STORE_INVALID",
      );
    });

    it("filters last_measurement__isnull and shipped_on__isnull, and counts", async () => {
      const a = await newAccount(env);
      await env.store.gateways.associate(a.id, "G1");
      await env.store.gateways.associate(a.id, "G2");
      await env.store.gateways.associate(a.id, "G3");
      await env.store.gateways.recordMeasurement("G1", T0);
      await env.store.gateways.setShipped("G2", T0);
      await env.store.gateways.setShipped("G3", T0);
      await env.store.gateways.setShipped("G3", null);
      const list = async (filter: { lastMeasurementIsNull?: boolean; shippedOnIsNull?: boolean }) =>
        (await env.store.gateways.list(a.id, filter, { count: true })).rows.map(
          (g) => g.gatewayUuid,
        );
      expect(await list({ lastMeasurementIsNull: true })).toEqual(["G2", "G3"]);
      expect(await list({ lastMeasurementIsNull: false })).toEqual(["G1"]);
      expect(await list({ shippedOnIsNull: false })).toEqual(["G2"]);
      expect(await list({ shippedOnIsNull: true, lastMeasurementIsNull: true })).toEqual(["G3"]);
      const page = await env.store.gateways.list(
        a.id,
        { ordering: "-assigned_on" },
        { limit: 1, offset: 1, count: true },
      );
      expect(page.total).toBe(3);
      expect(page.rows).toHaveLength(1);
    });

    it("keeps the whitelist per gateway: RE then CO, created and modified", async () => {
      await expectCode(
        env.store.whitelist.upsert("G1", {
          macAddress: "C26B2B7D56DC",
          sensorCode: "24",
          whitelistStatus: "RE",
        }),
        "E_STORE_NOT_FOUND",
      );
      await env.store.gateways.updateStatus("G1", {});
      const requested = await env.store.whitelist.upsert("g1", {
        macAddress: "C26B2B7D56DC",
        sensorCode: "24",
        whitelistStatus: "RE",
      });
      expect(requested).toMatchObject({
        gatewayUuid: "G1",
        whitelistStatus: "RE",
        created: T0,
        modified: T0,
      });
      advance(env, 60_000);
      const confirmed = await env.store.whitelist.upsert("G1", {
        macAddress: "C26B2B7D56DC",
        sensorCode: "24",
        whitelistStatus: "CO",
      });
      expect(confirmed).toMatchObject({
        whitelistStatus: "CO",
        created: T0,
        modified: T0 + 60_000,
      });
      await env.store.whitelist.upsert("G1", {
        macAddress: "0A0B0C0D0E0F",
        sensorCode: "10",
        whitelistStatus: "RE",
      });
      expect((await env.store.whitelist.list("G1")).map((w) => w.macAddress)).toEqual([
        "C26B2B7D56DC",
        "0A0B0C0D0E0F",
      ]);
      await expectCode(
        env.store.whitelist.upsert("G1", {
          macAddress: "X",
          sensorCode: "10",
          whitelistStatus: "OK" as "RE",
        }),
        "E_STORE_INVALID",
      );
      expect(await env.store.whitelist.remove("G1", "C26B2B7D56DC")).toBe(true);
      expect(await env.store.whitelist.remove("G1", "C26B2B7D56DC")).toBe(false);
      expect(await env.store.whitelist.remove("G404", "C26B2B7D56DC")).toBe(false);
      expect(await env.store.whitelist.list("G404")).toEqual([]);
    });

    it("reconciles the whitelist with what the gateway reports holding (RE ↔ CO)", async () => {
      await env.store.gateways.updateStatus("G2", {});
      for (const macAddress of ["C00000000001", "C00000000002", "C00000000003"]) {
        await env.store.whitelist.upsert("G2", {
          macAddress,
          sensorCode: "10",
          whitelistStatus: "RE",
        });
      }
      advance(env, 1000);
      // Held as the gateway reports them: an address (any case) and the sensor code it holds.
      const reconcile = async (gatewayUuid: string, held: string[], sensorCode = "10") =>
        (
          await env.store.whitelist.reconcile([
            { gatewayUuid, held: held.map((macAddress) => ({ macAddress, sensorCode })) },
          ])
        )[0]!;
      const first = await reconcile("g2", ["c00000000001", "C00000000003"]);
      expect(first.whitelist.map((w) => [w.macAddress, w.whitelistStatus])).toEqual([
        ["C00000000001", "CO"],
        ["C00000000002", "RE"],
        ["C00000000003", "CO"],
      ]);
      expect(first.changed.map((w) => [w.macAddress, w.whitelistStatus, w.modified])).toEqual([
        ["C00000000001", "CO", T0 + 1000],
        ["C00000000003", "CO", T0 + 1000],
      ]);
      advance(env, 1000);
      expect((await reconcile("G2", ["C00000000003"])).changed).toMatchObject([
        { macAddress: "C00000000001", whitelistStatus: "RE", modified: T0 + 2000 },
      ]);
      expect(
        (await env.store.whitelist.list("G2")).map((w) => [w.macAddress, w.whitelistStatus]),
      ).toEqual([
        ["C00000000001", "RE"],
        ["C00000000002", "RE"],
        ["C00000000003", "CO"],
      ]);
      // Held under another sensor code: a wrong entry, which confirms nothing.
      advance(env, 1000);
      expect((await reconcile("G2", ["C00000000003"], "99")).changed).toMatchObject([
        { macAddress: "C00000000003", whitelistStatus: "RE", modified: T0 + 3000 },
      ]);
      expect(await reconcile("G404", ["C00000000001"])).toEqual({ whitelist: [], changed: [] });
    });

    it("reconciles a batch of check-ins in order, a gateway reported twice from its first", async () => {
      for (const gatewayUuid of ["G5", "G6"]) {
        await env.store.gateways.updateStatus(gatewayUuid, {});
        await env.store.whitelist.upsert(gatewayUuid, {
          macAddress: "C00000000005",
          sensorCode: "10",
          whitelistStatus: "RE",
        });
      }
      const results = await env.store.whitelist.reconcile([
        { gatewayUuid: "G5", held: [{ macAddress: "C00000000005", sensorCode: "10" }] },
        { gatewayUuid: "G404", held: [] },
        { gatewayUuid: "g6", held: [] },
        { gatewayUuid: "G5", held: [] },
      ]);
      const summary = results.map((r) => ({
        whitelist: r.whitelist.map((w) => [w.gatewayUuid, w.whitelistStatus]),
        changed: r.changed.map((w) => w.whitelistStatus),
      }));
      expect(summary).toEqual([
        { whitelist: [["G5", "CO"]], changed: ["CO"] },
        { whitelist: [], changed: [] },
        { whitelist: [["G6", "RE"]], changed: [] },
        { whitelist: [["G5", "RE"]], changed: ["RE"] },
      ]);
      expect((await env.store.whitelist.list("G5"))[0]!.whitelistStatus).toBe("RE");
    });
  });
}
