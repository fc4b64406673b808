import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SupplyCatalogue } from "../../src/asr/supply-catalogue.ts";
import { ADMIN, hwi, type Lab, makeLab, send } from "./helpers.ts";

const supplies = SupplyCatalogue.load();

const DISABLED = {
  detail:
    "The ASR module is not enabled for this account. Ask your account representative to enable it.",
};

/** Spec 2.7 "Supply type", in the order the table lists the fields. */
const FIELDS = [
  "id",
  "name",
  "description",
  "image",
  "up_front_cost",
  "shipping_cost",
  "hardware_uuid_required",
  "deprecated",
];

type SupplyTypeJson = Record<string, unknown> & { id: string; name: string };

const idOf = (name: string) => supplies.byName(name)!.id;

/** Spec 4.5: GET asr/supply-types/, also written asr-supply-types; the module must be enabled. */
describe("asr/supply-types/ and asr/asr-supply-types/", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab();
  });
  afterEach(() => lab.close());

  const get = (domain: string, key: string, path: string) =>
    send(lab.app, "GET", `/clients/${domain}/asr/${path}`, key);
  const setAsr = (enabled: boolean) =>
    lab.app.inject({
      method: "PATCH",
      url: "/lab/v1/accounts/acme-dev/",
      headers: ADMIN,
      payload: { asr_enabled: enabled },
    });

  it("403 on both spellings while the account's ASR module is off", async () => {
    for (const path of ["supply-types/", "asr-supply-types/"]) {
      const res = await get("acme-dev", lab.dev.key, path);
      expect(res.statusCode, path).toBe(403);
      expect(res.json()).toEqual(DISABLED);
    }
  });

  it("once enabled, both spellings answer the same flat array of the documented fields", async () => {
    expect((await setAsr(true)).statusCode).toBe(200);
    const plain = await get("acme-dev", lab.dev.key, "supply-types/");
    const prefixed = await get("acme-dev", lab.dev.key, "asr-supply-types/");
    expect(plain.statusCode).toBe(200);
    expect(prefixed.statusCode).toBe(200);
    expect(plain.headers["content-type"]).toContain("application/json");
    const types = plain.json() as SupplyTypeJson[];
    expect(prefixed.json()).toEqual(types);
    for (const t of types) expect(Object.keys(t), t.name).toEqual(FIELDS);
    // Catalogue (file) order, deprecated types included and flagged.
    expect(types.map((t) => t.name)).toEqual(supplies.types.map((t) => t.name));
    expect(types.find((t) => t.name === "Glucometer Test Strips (50)")).toEqual({
      id: idOf("Glucometer Test Strips (50)"),
      name: "Glucometer Test Strips (50)",
      description: supplies.byName("Glucometer Test Strips (50)")!.description,
      image: "https://static.rpmlab.example/supplies/glucometer-test-strips-50.png",
      up_front_cost: "15.00",
      shipping_cost: "5.00",
      hardware_uuid_required: true,
      deprecated: false,
    });
    expect(types.find((t) => t.name === "Glucometer Test Strips (25)")?.deprecated).toBe(true);
    expect(types.filter((t) => t.deprecated).map((t) => t.name)).toEqual([
      "Glucometer Test Strips (25)",
    ]);
    expect(types.find((t) => t.name === "Lancets (100)")?.hardware_uuid_required).toBe(false);
    for (const t of types) {
      expect(t.up_front_cost).toMatch(/^\d+\.\d{2}$/);
      expect(t.shipping_cost).toMatch(/^\d+\.\d{2}$/);
      expect(t.image).toMatch(/^https:\/\//);
    }
  });

  it("follows the flag: 403 again once the module is turned off", async () => {
    await setAsr(true);
    expect((await get("acme-dev", lab.dev.key, "asr-supply-types/")).statusCode).toBe(200);
    await setAsr(false);
    expect((await get("acme-dev", lab.dev.key, "asr-supply-types/")).json()).toEqual(DISABLED);
  });

  it("is the same catalogue for every account (acme has ASR from creation)", async () => {
    await setAsr(true);
    const dev = await get("acme-dev", lab.dev.key, "supply-types/");
    const prod = await get("acme", lab.prod.key, "supply-types/");
    expect(prod.statusCode).toBe(200);
    expect(prod.json()).toEqual(dev.json());
  });

  it("takes GET only (405 with Allow), and redirects a path without its slash", async () => {
    const post = await send(lab.app, "POST", "/clients/acme/asr/supply-types/", lab.prod.key, {});
    expect(post.statusCode).toBe(405);
    const bare = await get("acme", lab.prod.key, "asr-supply-types");
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe("/clients/acme/asr/asr-supply-types/");
  });
});

/** hwi-device-types supply_types: the ids of the supply types that fit each device type. */
describe("hwi-device-types/ supply_types", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab();
  });
  afterEach(() => lab.close());

  const deviceTypes = async () => {
    const res = await send(lab.app, "GET", hwi(lab.dev, "hwi-device-types/"), lab.dev.key);
    expect(res.statusCode).toBe(200);
    const types = res.json() as { name: string; supply_types: string[] }[];
    return (name: string) => types.find((t) => t.name === name)!.supply_types;
  };

  it("lists the glucometers' strips (deprecated pack included), lancets and the rest, as ids", async () => {
    const of = await deviceTypes();
    const glucometer = [
      "Glucometer Test Strips (50)",
      "Glucometer Test Strips (100)",
      "Glucometer Test Strips (25)",
      "Lancets (100)",
      "Glucose Control Solution",
      "AAA Batteries (4)",
    ].map(idOf);
    expect(of("Vendor Glucometer")).toEqual(glucometer);
    expect(of("Vendor Cellular Glucometer")).toEqual(glucometer);
    expect(of("Vendor BPM - XL")).toEqual([idOf("BPM Cuff - XL"), idOf("AA Batteries (4)")]);
    expect(of("Vendor Fetal Doppler")).toEqual([idOf("Ultrasound Gel")]);
  });

  it("is empty for a device type without supplies", async () => {
    const of = await deviceTypes();
    for (const name of [
      "Vendor Proximity Band",
      "Vendor Medication Cap",
      "Vendor Inhaler Sensor",
    ]) {
      expect(of(name), name).toEqual([]);
    }
  });

  it("names only ids asr/supply-types/ serves", async () => {
    const res = await send(lab.app, "GET", hwi(lab.dev, "hwi-device-types/"), lab.dev.key);
    const listed = new Set(supplies.types.map((t) => t.id));
    for (const t of res.json() as { name: string; supply_types: string[] }[]) {
      for (const id of t.supply_types) expect(listed.has(id), t.name).toBe(true);
    }
  });
});
