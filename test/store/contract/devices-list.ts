import { describe, expect, it } from "vitest";
import type { Store } from "../../../src/store/store.ts";
import { type DeviceFilter, SHIPPED_STATUSES } from "../../../src/store/types.ts";
import { advance, type ContractEnv, newAccount } from "./env.ts";

/** Spec 4.3 list filters; wire-formats "Devices" filters seen in real clients. */
export function devicesListContract(env: ContractEnv): void {
  /** Five devices on one account, created a millisecond apart, named d1…d5. */
  async function fleet(store: Store) {
    const a = await newAccount(env);
    const p1 = await store.patients.create(a.id, { externalId: "Pat-1", name: "Ada Lovelace" });
    const p2 = await store.patients.create(a.id, { externalId: "pat-1b", name: "Grace 100%" });
    const specs = [
      { name: "d1", status: "Dropshipped", hardwareUuid: "AAAAAAAAAA01", patientId: p1.id },
      { name: "d2", status: "In Transit", hardwareUuid: "aaaaaaaaaa02", patientId: p2.id },
      { name: "d3", status: "Out for Delivery", hardwareUuid: "AAAAAAAAAA03", patientId: null },
      {
        name: "d4",
        status: "Available for Pickup",
        hardwareUuid: "AAAAAAAAAA04",
        patientId: p1.id,
      },
      { name: "d5", status: "Delivered", hardwareUuid: null, sensorId: "XYZ_9" },
    ];
    const ids: Record<string, string> = {};
    for (const s of specs) {
      ids[s.name] = (await store.devices.create(a.id, { sensorCode: "10", ...s })).id;
      advance(env, 1);
    }
    return { a, ids };
  }
  const names = async (accountId: string, filter: DeviceFilter) =>
    (await env.store.devices.list(accountId, filter)).rows.map((d) => d.name);

  describe("device list", () => {
    it("filters by property key and value on the same property row", async () => {
      const { a, ids } = await fleet(env.store);
      const set = env.store.deviceProperties.set;
      await set(ids.d1!, "measurement_webhook_id", "w-1");
      await set(ids.d2!, "measurement_webhook_id", "w-2");
      await set(ids.d3!, "other", "w-1");
      expect(await names(a.id, { propertyKey: "measurement_webhook_id" })).toEqual(["d1", "d2"]);
      expect(await names(a.id, { propertyValue: "w-1" })).toEqual(["d1", "d3"]);
      expect(
        await names(a.id, { propertyKey: "measurement_webhook_id", propertyValue: "w-1" }),
      ).toEqual(["d1"]);
      expect(await names(a.id, { propertyKey: "other", propertyValue: "w-2" })).toEqual([]);
      // Any of no values matches nothing, as status: [] does (PostgreSQL refused `in ()`).
      expect(await names(a.id, { propertyValue: [] })).toEqual([]);
      expect(
        (await env.store.devices.list(a.id, { propertyValue: [] }, { count: true })).total,
      ).toBe(0);
    });

    it("status=shipped: Dropshipped, In Transit, Out for Delivery, not Available for Pickup", async () => {
      const { a } = await fleet(env.store);
      expect(await names(a.id, { status: SHIPPED_STATUSES })).toEqual(["d1", "d2", "d3"]);
      expect(await names(a.id, { status: "Available for Pickup" })).toEqual(["d4"]);
      expect(await names(a.id, { status: [] })).toEqual([]);
      expect((await env.store.devices.list(a.id, { status: [] }, { count: true })).total).toBe(0);
    });

    it("patient__external_id is exact; the nested patient comes with each device", async () => {
      const { a } = await fleet(env.store);
      expect(await names(a.id, { patientExternalId: "Pat-1" })).toEqual(["d1", "d4"]);
      expect(await names(a.id, { patientExternalId: "pat-1" })).toEqual([]);
      const { rows } = await env.store.devices.list(a.id, { patientExternalId: "pat-1b" });
      expect(rows[0]?.patient).toMatchObject({ externalId: "pat-1b", name: "Grace 100%" });
    });

    it("device__hardware_uuid is exact, __iexact ignores case", async () => {
      const { a } = await fleet(env.store);
      expect(await names(a.id, { hardwareUuid: "AAAAAAAAAA02" })).toEqual([]);
      expect(await names(a.id, { hardwareUuid: "aaaaaaaaaa02" })).toEqual(["d2"]);
      expect(await names(a.id, { hardwareUuidIexact: "AAAAAAAAAA02" })).toEqual(["d2"]);
      expect(await names(a.id, { hardwareUuidIexact: "aaaaaaaaaa01" })).toEqual(["d1"]);
    });

    it("search matches substrings ignoring case, and takes % and _ literally", async () => {
      const { a } = await fleet(env.store);
      expect(await names(a.id, { search: "LOVELACE" })).toEqual(["d1", "d4"]);
      expect(await names(a.id, { search: "in transit" })).toEqual(["d2"]);
      expect(await names(a.id, { search: "a03" })).toEqual(["d3"]);
      expect(await names(a.id, { search: "100%" })).toEqual(["d2"]);
      expect(await names(a.id, { search: "%" })).toEqual(["d2"]);
      expect(await names(a.id, { search: "z_9" })).toEqual(["d5"]);
      expect(await names(a.id, { search: "_" })).toEqual(["d5"]);
      expect(await names(a.id, { search: "nobody" })).toEqual([]);
    });

    it("search ignores case beyond ASCII, and finds the text as stored on either store", async () => {
      const a = await newAccount(env);
      const scaleOf = async (externalId: string, name: string) => {
        const p = await env.store.patients.create(a.id, { externalId, name });
        await env.store.devices.create(a.id, {
          name: "Vendor Scale",
          sensorCode: "34",
          status: "Active",
          patientId: p.id,
        });
        return p.id;
      };
      const zoe = await scaleOf("p-é", "Zoë Ünïcode");
      const nikos = await scaleOf("p-gr", "ΝΙΚΟΣ ΠΑΠΑΣ");
      const patients = async (search: string) =>
        (await env.store.devices.list(a.id, { search })).rows.map((d) => d.patientId);
      expect(await patients("ZOË ÜNÏ")).toEqual([zoe]);
      expect(await patients("zoë")).toEqual([zoe]);
      expect(await patients("zoe")).toEqual([]);
      const ilker = await scaleOf("p-tr", "İlker Işık");
      // One fold for both sides and both stores: PostgreSQL's lower() maps Σ to σ and İ to i,
      // JavaScript's to ς at the end of a word and İ to i + U+0307; ς is taken as σ.
      expect(await patients("ΝΙΚΟΣ")).toEqual([nikos]);
      expect(await patients("ΠΑΠΑΣ")).toEqual([nikos]);
      expect(await patients("Νικ")).toEqual([nikos]);
      // As a Greek keyboard writes it, final sigma and all.
      expect(await patients("Νικος")).toEqual([nikos]);
      expect(await patients("νικοσ παπ")).toEqual([nikos]);
      expect(await patients("ilker")).toEqual([ilker]);
      expect(await patients("İLKER")).toEqual([ilker]);
    });

    it("pages in creation order with a total that ignores the page", async () => {
      const { a } = await fleet(env.store);
      const page = await env.store.devices.list(a.id, {}, { limit: 2, offset: 2, count: true });
      expect(page.rows.map((d) => d.name)).toEqual(["d3", "d4"]);
      expect(page.total).toBe(5);
      const shipped = await env.store.devices.list(
        a.id,
        { status: SHIPPED_STATUSES, search: "a" },
        { limit: 1, count: true },
      );
      expect(shipped.rows.map((d) => d.name)).toEqual(["d1"]);
      expect(shipped.total).toBe(3);
      const other = await newAccount(env);
      expect((await env.store.devices.list(other.id, {}, { count: true })).total).toBe(0);
    });
  });
}
