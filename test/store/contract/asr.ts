import { describe, expect, it } from "vitest";
import { toIsoMicros } from "../../../src/core/time.ts";
import type { NewSupplyRequest } from "../../../src/store/types-asr.ts";
import { advance, type ContractEnv, DAY, expectCode, newAccount, reading, T0 } from "./env.ts";

/** Spec 2.7, 4.5: supply requests, glucometer strip usage and offsets, reorder thresholds. */
export function asrContract(env: ContractEnv): void {
  const order = (over: Partial<NewSupplyRequest> = {}): NewSupplyRequest => ({
    supplyTypeId: "type-1",
    supplyName: "Glucometer Test Strips (50)",
    gatewayId: "297056120BD7",
    imei: null,
    hardwareUuid: "297056120BD7",
    relatedDeviceId: null,
    forDeviceId: "meter-1",
    patientExternalId: "P-1",
    shippingName: "Ada Patient",
    shippingAddress: "1 Main St",
    shippingCity: "Irvine",
    shippingState: "CA",
    shippingZipCode: "92614",
    notifyEmails: null,
    origin: "client",
    strips: 50,
    upFrontCost: "15.00",
    shippingCost: "5.00",
    nextAt: () => T0 + DAY,
    ...over,
  });

  describe("supply requests", () => {
    it("creates pending at step 0, its first step drawn from its id, and reads every field back", async () => {
      const a = await newAccount(env);
      let named = "";
      const r = await env.store.supplyRequests.create(
        a.id,
        order({
          nextAt: (id) => {
            named = id;
            return T0 + DAY;
          },
        }),
      );
      expect(named).toBe(r.id);
      const { nextAt: _, ...fields } = order();
      expect(r).toEqual({
        ...fields,
        nextAt: T0 + DAY,
        id: r.id,
        accountId: a.id,
        status: "pending",
        step: 0,
        carrier: null,
        trackingNumber: null,
        trackingLink: null,
        created: T0,
        modified: T0,
        shippedOn: null,
        deliveredOn: null,
      });
      expect(await env.store.supplyRequests.get(a.id, r.id)).toEqual(r);
      expect(await env.store.supplyRequests.getById(r.id)).toEqual(r);
      const other = await newAccount(env);
      expect(await env.store.supplyRequests.get(other.id, r.id)).toBeNull();
    });

    it("update moves a step on; a removed order is not found", async () => {
      const a = await newAccount(env);
      const r = await env.store.supplyRequests.create(a.id, order());
      advance(env, 1000);
      const shipped = await env.store.supplyRequests.update(r.id, {
        status: "fulfilled",
        shippedOn: T0 + 1000,
        carrier: "ups",
        nextAt: T0 + 3 * DAY,
      });
      expect(shipped).toMatchObject({
        step: 1,
        status: "fulfilled",
        shippedOn: T0 + 1000,
        carrier: "ups",
        nextAt: T0 + 3 * DAY,
        modified: T0 + 1000,
      });
      await expectCode(env.store.supplyRequests.update("nope", {}), "E_STORE_NOT_FOUND");
    });

    it("lists newest first, filters by fulfilled, device, origin, undelivered and search", async () => {
      const a = await newAccount(env);
      const first = await env.store.supplyRequests.create(a.id, order());
      advance(env, 1000);
      const second = await env.store.supplyRequests.create(
        a.id,
        order({
          origin: "auto_reorder",
          forDeviceId: "meter-2",
          shippingCity: "Tustin_%",
          supplyTypeId: "type-2",
        }),
      );
      await env.store.supplyRequests.update(first.id, {
        status: "fulfilled",
        shippedOn: T0,
        deliveredOn: T0 + DAY,
      });
      const ids = async (filter: Parameters<typeof env.store.supplyRequests.list>[1]) =>
        (await env.store.supplyRequests.list(a.id, filter)).rows.map((r) => r.id);
      expect(await ids({})).toEqual([second.id, first.id]);
      expect(await ids({ fulfilled: true })).toEqual([first.id]);
      expect(await ids({ fulfilled: false })).toEqual([second.id]);
      expect(await ids({ forDeviceId: "meter-1" })).toEqual([first.id]);
      expect(await ids({ origin: "auto_reorder" })).toEqual([second.id]);
      expect(await ids({ undelivered: true })).toEqual([second.id]);
      // Case-insensitive, and LIKE's wildcards are the text's own characters.
      expect(await ids({ search: "TUSTIN_%" })).toEqual([second.id]);
      expect(await ids({ search: "tustin__" })).toEqual([]);
      expect(await ids({ search: first.id.slice(0, 8).toUpperCase() })).toEqual([first.id]);
      // Dates as the API writes them: delivered the next day; created and shipped at T0 itself.
      expect(await ids({ search: toIsoMicros(T0 + DAY).slice(0, 10) })).toEqual([first.id]);
      expect(await ids({ search: toIsoMicros(T0).slice(11) })).toEqual([first.id]);
      // The supply type's own fields are the catalogue's: the caller names the types they match.
      expect(await ids({ search: "in no field", searchSupplyTypeIds: ["type-2"] })).toEqual([
        second.id,
      ]);
      const page = await env.store.supplyRequests.list(
        a.id,
        {},
        { limit: 1, offset: 1, count: true },
      );
      expect(page).toMatchObject({ total: 2, rows: [{ id: first.id }] });
    });

    it("deletes only a pending request of the account", async () => {
      const a = await newAccount(env);
      const other = await newAccount(env);
      const pending = await env.store.supplyRequests.create(a.id, order());
      const shipped = await env.store.supplyRequests.create(a.id, order());
      await env.store.supplyRequests.update(shipped.id, { status: "fulfilled", shippedOn: T0 });
      expect(await env.store.supplyRequests.delete(other.id, pending.id)).toBe(false);
      expect(await env.store.supplyRequests.delete(a.id, shipped.id)).toBe(false);
      expect(await env.store.supplyRequests.delete(a.id, pending.id)).toBe(true);
      expect(await env.store.supplyRequests.get(a.id, pending.id)).toBeNull();
    });

    it("due lists scheduled steps by time; strips and shipments are summed per device and period", async () => {
      const a = await newAccount(env);
      const late = await env.store.supplyRequests.create(
        a.id,
        order({ nextAt: () => T0 + 2 * DAY }),
      );
      const soon = await env.store.supplyRequests.create(a.id, order({ nextAt: () => T0 + DAY }));
      await env.store.supplyRequests.create(
        a.id,
        order({ nextAt: () => null, forDeviceId: "meter-2" }),
      );
      expect((await env.store.supplyRequests.due()).map((r) => r.id)).toEqual([soon.id, late.id]);
      expect((await env.store.supplyRequests.due(T0 + DAY)).map((r) => r.id)).toEqual([soon.id]);
      expect((await env.store.supplyRequests.due(undefined, 1)).map((r) => r.id)).toEqual([
        soon.id,
      ]);
      expect(await env.store.supplyRequests.stripsShipped(a.id, ["meter-1"])).toBe(0);
      await env.store.supplyRequests.update(soon.id, { status: "fulfilled", shippedOn: T0 + DAY });
      await env.store.supplyRequests.update(late.id, {
        status: "fulfilled",
        shippedOn: T0 + 40 * DAY,
      });
      expect(await env.store.supplyRequests.stripsShipped(a.id, ["meter-1"])).toBe(100);
      expect(await env.store.supplyRequests.stripsShipped(a.id, ["meter-2"])).toBe(0);
      expect(await env.store.supplyRequests.stripsShipped(a.id, [])).toBe(0);
      const inMonth = await env.store.supplyRequests.shippedBetween(T0, T0 + 30 * DAY, a.id);
      expect(inMonth.map((r) => r.id)).toEqual([soon.id]);
      const other = await newAccount(env);
      expect(await env.store.supplyRequests.shippedBetween(T0, T0 + 90 * DAY, other.id)).toEqual(
        [],
      );
    });
  });

  describe("glucometer supplies", () => {
    it("counts the glucose readings of the devices asked about, recent ones and the first", async () => {
      const a = await newAccount(env);
      const glucometer = await env.store.devices.create(a.id, {
        name: "Vendor Glucometer",
        sensorCode: "6",
        hardwareUuid: "297056120BD7",
        status: "Active",
      });
      const glucose = (timestamp: number, metric = "glucose") =>
        reading({
          accountId: a.id,
          deviceId: glucometer.id,
          metric,
          value1: 100,
          timestamp,
          measurementIndex: timestamp / 60_000,
        });
      await env.store.measurements.insertMany([
        glucose(T0 - 20 * DAY),
        glucose(T0 - 2 * DAY),
        glucose(T0 - DAY),
        glucose(T0 - DAY, "battery_percentage"),
        // A drifting clock's reading from the future used a strip, but is not recent use.
        glucose(T0 + DAY),
      ]);
      expect(
        await env.store.glucometerSupplies.usage(a.id, [glucometer.id], {
          since: T0 - 14 * DAY,
          now: T0,
        }),
      ).toEqual({
        used: 4,
        recent: 2,
        first: T0 - 20 * DAY,
      });
      const recent = { since: T0, now: T0 };
      expect(await env.store.glucometerSupplies.usage(a.id, [], recent)).toEqual({
        used: 0,
        recent: 0,
        first: null,
      });
      const other = await newAccount(env);
      expect(
        (await env.store.glucometerSupplies.usage(other.id, [glucometer.id], recent)).used,
      ).toBe(0);
    });

    it("keeps one offset per meter, 0 until set, summed over the meters asked about", async () => {
      const a = await newAccount(env);
      const meter = async () =>
        (await env.store.devices.create(a.id, { name: "Vendor Glucometer", status: "Active" })).id;
      const [one, two] = [await meter(), await meter()];
      expect(await env.store.glucometerSupplies.offset(a.id, [one])).toBe(0);
      await env.store.glucometerSupplies.setOffset(a.id, one, 12);
      await env.store.glucometerSupplies.setOffset(a.id, one, -7);
      expect(await env.store.glucometerSupplies.offset(a.id, [one])).toBe(-7);
      expect(await env.store.glucometerSupplies.offset(a.id, [two])).toBe(0);
      await env.store.glucometerSupplies.setOffset(a.id, two, 3);
      expect(await env.store.glucometerSupplies.offset(a.id, [one, two])).toBe(-4);
      expect(await env.store.glucometerSupplies.offset(a.id, [])).toBe(0);
    });
  });

  describe("automatic reorder settings", () => {
    it("are set, replaced and removed per account; listed only where the ASR module is on", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      const settings = {
        stripsBelow: 20,
        daysBelow: null,
        supplyName: "Glucometer Test Strips (50)",
      };
      expect(await env.store.asrSettings.autoReorder(a.id)).toBeNull();
      await env.store.asrSettings.setAutoReorder(a.id, settings);
      await env.store.asrSettings.setAutoReorder(b.id, { ...settings, daysBelow: 5 });
      await env.store.asrSettings.setAutoReorder(a.id, { ...settings, stripsBelow: 30 });
      expect(await env.store.asrSettings.autoReorder(a.id)).toEqual({
        ...settings,
        stripsBelow: 30,
      });
      expect(await env.store.asrSettings.autoReordering()).toEqual([]);
      await env.store.accounts.update(b.id, { asrEnabled: true });
      expect(await env.store.asrSettings.autoReordering()).toEqual([
        { accountId: b.id, settings: { ...settings, daysBelow: 5 } },
      ]);
      await env.store.asrSettings.setAutoReorder(b.id, null);
      expect(await env.store.asrSettings.autoReordering()).toEqual([]);
    });
  });
}
