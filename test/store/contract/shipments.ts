import { describe, expect, it } from "vitest";
import { advance, type ContractEnv, DAY, expectCode, newAccount, T0 } from "./env.ts";

/** Issue 4 §2: shipments of the fulfilment simulator, their history, and billing periods. */
export function shipmentsContract(env: ContractEnv): void {
  const device = async (accountId: string, status = "Ready to Ship") =>
    env.store.devices.create(accountId, { name: "Vendor Scale", sensorCode: "34", status });

  describe("shipments", () => {
    it("creates with defaults, reads back every field, and updates any of them", async () => {
      const a = await newAccount(env);
      const d = await device(a.id);
      const s = await env.store.shipments.create(a.id, {
        id: d.id,
        kind: "device",
        deviceId: d.id,
        status: "Ready to Ship",
        requireSignature: true,
        deliveryType: "Priority",
        nextStatus: "Dropshipped",
        nextAt: T0 + DAY,
      });
      expect(s).toEqual({
        id: d.id,
        accountId: a.id,
        kind: "device",
        deviceId: d.id,
        replacementId: null,
        status: "Ready to Ship",
        reason: null,
        requireSignature: true,
        shipGatewayOnly: false,
        deliveryType: "Priority",
        shipsDevice: null,
        shipsGateway: null,
        hardwareUuid: null,
        carrier: null,
        trackingNumber: null,
        trackingLink: null,
        step: 0,
        scansPlanned: 0,
        scansDone: 0,
        transitMs: 0,
        attempts: 0,
        nextStatus: "Dropshipped",
        nextAt: T0 + DAY,
        expectedDelivery: null,
        shippedOn: null,
        deliveredOn: null,
        deliveredVia: null,
        signedBy: null,
        halted: null,
        created: T0,
        modified: T0,
      });
      expect(await env.store.shipments.get(d.id)).toEqual(s);
      expect(await env.store.shipments.get("nope")).toBeNull();
      advance(env, 1000);
      const patch = {
        status: "Delivered",
        shipsDevice: true,
        shipsGateway: false,
        hardwareUuid: "297056120BD7",
        carrier: "ups",
        trackingNumber: "1Z",
        trackingLink: "https://t/1Z",
        step: 7,
        scansPlanned: 3,
        scansDone: 3,
        transitMs: 3 * DAY,
        attempts: 1,
        nextStatus: null,
        nextAt: null,
        expectedDelivery: T0 + 5 * DAY,
        shippedOn: T0 + DAY,
        deliveredOn: T0 + 4 * DAY,
        deliveredVia: "doorstep" as const,
        signedBy: "PAT ONE",
        halted: null,
        reason: null,
      };
      const updated = await env.store.shipments.update(d.id, patch, { expectStep: 0 });
      expect(updated).toEqual({ ...s, ...patch, modified: T0 + 1000 });
      expect(await env.store.shipments.get(d.id)).toEqual(updated);
    });

    it("applies an update only at the expected step (a timer and an admin never both move it)", async () => {
      const a = await newAccount(env);
      const d = await device(a.id);
      await env.store.shipments.create(a.id, {
        id: d.id,
        kind: "device",
        deviceId: d.id,
        status: "Ready to Ship",
      });
      await env.store.shipments.update(d.id, { step: 1, status: "Dropshipped" }, { expectStep: 0 });
      await expectCode(
        env.store.shipments.update(d.id, { step: 1, status: "On Hold" }, { expectStep: 0 }),
        "E_STORE_CONFLICT",
      );
      expect((await env.store.shipments.get(d.id))?.status).toBe("Dropshipped");
      await expectCode(env.store.shipments.update("nope", { step: 1 }), "E_STORE_NOT_FOUND");
    });

    it("refuses a shipment without its device, a second one with the same id, an unknown kind", async () => {
      const a = await newAccount(env);
      const d = await device(a.id);
      await expectCode(
        env.store.shipments.create(a.id, {
          id: "x",
          kind: "device",
          deviceId: "missing",
          status: "Ready to Ship",
        }),
        "E_STORE_NOT_FOUND",
      );
      const input = { id: d.id, kind: "device" as const, deviceId: d.id, status: "On Hold" };
      await env.store.shipments.create(a.id, input);
      await expectCode(env.store.shipments.create(a.id, input), "E_STORE_CONFLICT");
      await expectCode(
        env.store.shipments.create(a.id, { ...input, id: "y", kind: "bulk" as "device" }),
        "E_STORE_INVALID",
      );
    });

    it("lists by account, status and kind, oldest first; gives due ones by due time", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      const make = async (accountId: string, status: string, nextAt: number | null) => {
        const d = await device(accountId, status);
        advance(env, 1);
        return env.store.shipments.create(accountId, {
          id: d.id,
          kind: "device",
          deviceId: d.id,
          status,
          nextStatus: nextAt === null ? null : "Dropshipped",
          nextAt,
        });
      };
      const s1 = await make(a.id, "Ready to Ship", T0 + 3 * DAY);
      const s2 = await make(a.id, "In Transit", T0 + DAY);
      const s3 = await make(b.id, "Delivered", null);
      const s4 = await make(b.id, "In Transit", T0 + 2 * DAY);
      const r = await env.store.replacements.create(a.id, {
        deviceId: s1.deviceId,
        deviceTypes: ["Gateway"],
      });
      const s5 = await env.store.shipments.create(a.id, {
        id: r.id,
        kind: "replacement",
        deviceId: s1.deviceId,
        replacementId: r.id,
        status: "On Hold",
      });
      const ids = (rows: { id: string }[]) => rows.map((x) => x.id);
      expect(ids((await env.store.shipments.list()).rows)).toEqual(ids([s1, s2, s3, s4, s5]));
      expect(ids((await env.store.shipments.list({ accountId: a.id })).rows)).toEqual(
        ids([s1, s2, s5]),
      );
      const transit = await env.store.shipments.list(
        { status: ["In Transit", "Delivered"] },
        {
          count: true,
          limit: 1,
          offset: 1,
        },
      );
      expect(transit).toEqual({ rows: [s3], total: 3 });
      expect((await env.store.shipments.list({ status: [] })).rows).toEqual([]);
      expect(ids((await env.store.shipments.list({ kind: "replacement" })).rows)).toEqual([r.id]);
      expect(ids(await env.store.shipments.due())).toEqual(ids([s2, s4, s1]));
      expect(ids(await env.store.shipments.due(T0 + 2 * DAY))).toEqual(ids([s2, s4]));
      expect(ids(await env.store.shipments.due(T0 + 2 * DAY, 1))).toEqual(ids([s2]));
      // Removing the order removes its shipment (spec 3 Cancelled).
      await env.store.replacements.delete(a.id, r.id);
      expect(await env.store.shipments.get(r.id)).toBeNull();
      await env.store.devices.delete(b.id, s3.deviceId);
      expect(await env.store.shipments.get(s3.id)).toBeNull();
    });

    it("keeps a carrier history in order, and finds what shipped in a period", async () => {
      const a = await newAccount(env);
      const d = await device(a.id);
      await env.store.shipments.create(a.id, {
        id: d.id,
        kind: "device",
        deviceId: d.id,
        status: "Ready to Ship",
      });
      await env.store.shipments.addEvent(d.id, { status: "Ready to Ship", at: T0, detail: "ok" });
      const scan = await env.store.shipments.addEvent(d.id, {
        status: "In Transit",
        at: T0 + DAY,
        detail: "Arrived",
        location: "Memphis, TN",
      });
      expect(scan).toMatchObject({ shipmentId: d.id, at: T0 + DAY, location: "Memphis, TN" });
      expect((await env.store.shipments.events(d.id)).map((e) => [e.status, e.location])).toEqual([
        ["Ready to Ship", null],
        ["In Transit", "Memphis, TN"],
      ]);
      await expectCode(
        env.store.shipments.addEvent("nope", { status: "x", at: T0, detail: "" }),
        "E_STORE_NOT_FOUND",
      );
      await env.store.shipments.update(d.id, { shippedOn: T0 + DAY });
      expect(await env.store.shipments.shippedBetween(T0, T0 + DAY)).toEqual([]);
      const shipped = await env.store.shipments.shippedBetween(T0 + DAY, T0 + 2 * DAY, a.id);
      expect(shipped.map((s) => s.id)).toEqual([d.id]);
      expect(
        await env.store.shipments.shippedBetween(T0, T0 + 2 * DAY, (await newAccount(env)).id),
      ).toEqual([]);
    });
  });

  describe("billing periods", () => {
    it("opens one period per device, closes it, and lists those overlapping a range", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      const first = await env.store.billingPeriods.open(a.id, "d1", T0, "activation");
      expect(first).toMatchObject({
        accountId: a.id,
        deviceId: "d1",
        started: T0,
        ended: null,
        basis: "activation",
      });
      // Opening again while open returns the open one.
      expect(await env.store.billingPeriods.open(a.id, "d1", T0 + DAY, "delivery")).toEqual(first);
      await env.store.billingPeriods.open(a.id, "d2", T0 + 2 * DAY, "delivery");
      await env.store.billingPeriods.open(b.id, "d3", T0, "pickup");
      expect(await env.store.billingPeriods.close(a.id, ["d1", "d3", "none"], T0 + 3 * DAY)).toBe(
        1,
      );
      expect(await env.store.billingPeriods.close(a.id, ["d1"], T0 + 4 * DAY)).toBe(0);
      const list = (filter: Parameters<typeof env.store.billingPeriods.list>[0]) =>
        env.store.billingPeriods.list(filter).then((rows) => rows.map((r) => r.deviceId));
      expect(await list({ accountId: a.id })).toEqual(["d1", "d2"]);
      expect(await list({ accountId: a.id, from: T0 + 3 * DAY })).toEqual(["d2"]);
      expect(await list({ accountId: a.id, to: T0 + 2 * DAY })).toEqual(["d1"]);
      expect(await list({ deviceId: "d3" })).toEqual(["d3"]);
      expect((await env.store.billingPeriods.list({ deviceId: "d1" }))[0]?.ended).toBe(
        T0 + 3 * DAY,
      );
      // A new period after the first one ended.
      await env.store.billingPeriods.open(a.id, "d1", T0 + 5 * DAY, "delivery");
      expect(await list({ deviceId: "d1" })).toEqual(["d1", "d1"]);
      await expectCode(
        env.store.billingPeriods.open(a.id, "d9", T0, "monthly" as "delivery"),
        "E_STORE_INVALID",
      );
    });
  });
}
