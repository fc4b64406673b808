import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_SEARCH_LENGTH } from "../../src/api/pagination.ts";
import { hwi, type Lab, makeLab } from "./helpers.ts";
import { activate, BPM, GW, GW2, hwiCall, labServices } from "./hwi-fixtures.ts";

/** GET hwi-devices/ (spec 4.3; wire-formats "Devices" filters; spec 8 flat and envelope). */
describe("hwi-devices list", () => {
  let lab: Lab;
  let call: ReturnType<typeof hwiCall>;
  beforeEach(async () => {
    lab = await makeLab();
    call = hwiCall(lab);
  });
  afterEach(() => lab.close());

  it("flat array without page, envelope with page; the other account's devices never show", async () => {
    await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
    await activate(lab, { device: { name: "Vendor Scale", hardware_uuid: GW } });
    await activate(lab, { device: { name: "Vendor Scale", hardware_uuid: GW2 } }, lab.other);
    const flat = (await call("GET", "hwi-devices/")).json();
    expect(Array.isArray(flat)).toBe(true);
    expect(flat.map((d: { device: { name: string } }) => d.device.name)).toEqual([
      BPM,
      "Vendor Scale",
    ]);
    const page = (await call("GET", "hwi-devices/?page=1&page_size=1")).json();
    expect(page).toMatchObject({
      count: 2,
      previous: null,
      results: [{ device: { name: BPM } }],
    });
    expect(page.next).toBe(`http://localhost${hwi(lab.dev, "hwi-devices/")}?page=2&page_size=1`);
  });

  it("each filter: properties__key/value, status=shipped, patient, hardware uuid, search", async () => {
    const services = labServices(lab);
    const a = lab.dev.account.id;
    const bpm = await activate(lab, {
      device: { name: BPM, hardware_uuid: GW },
      patient: { external_id: "P-1" },
    });
    const scale = await activate(lab, {
      device: { name: "Vendor Scale", hardware_uuid: GW2 },
      patient: { external_id: "P-2" },
    });
    const shipped = await activate(lab, { device: { name: "Vendor Glucometer" } });
    const pickup = await activate(lab, { device: { name: "Vendor Pulse Ox" } });
    await lab.store.devices.update(a, shipped.id, { status: "In Transit" });
    await lab.store.devices.update(a, pickup.id, { status: "Available for Pickup" });
    const hook = await call("POST", "webhooks/", { endpoint: "https://client.example/m" });
    await services.properties.set(a, scale.id, {
      key: "measurement_webhook_id",
      value: hook.json().id,
    });
    await services.properties.set(a, bpm.id, { key: "colour", value: "blue" });

    const ids = async (query: string) =>
      ((await call("GET", `hwi-devices/?${query}`)).json() as { id: string }[]).map((d) => d.id);
    expect(await ids("properties__key=measurement_webhook_id")).toEqual([scale.id]);
    expect(await ids(`properties__value=${hook.json().id}`)).toEqual([scale.id]);
    expect(await ids("properties__key=colour&properties__value=red")).toEqual([]);
    expect(await ids("status=shipped")).toEqual([shipped.id]);
    expect(await ids("status=Available%20for%20Pickup")).toEqual([pickup.id]);
    expect(await ids("patient__external_id=P-2")).toEqual([scale.id]);
    expect(await ids("patient__external_id=p-2")).toEqual([]);
    expect(await ids(`device__hardware_uuid=${GW}`)).toEqual([bpm.id]);
    expect(await ids(`device__hardware_uuid=${GW.toLowerCase()}`)).toEqual([]);
    expect(await ids(`device__hardware_uuid__iexact=${GW.toLowerCase()}`)).toEqual([bpm.id]);
    expect(await ids("search=pulse")).toEqual([pickup.id]);
    expect(await ids("search=p-1")).toEqual([bpm.id]);
    expect(await ids("search=&status=")).toHaveLength(4);
  });

  it("properties__value finds a device by the webhook id it was set with, in any case", async () => {
    const device = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
    await activate(lab, { device: { name: "Vendor Scale", hardware_uuid: GW2 } });
    const hook = (await call("POST", "webhooks/", { endpoint: "https://client.example/m" })).json();
    const upper = (hook.id as string).toUpperCase();
    const props = `hwi-devices/${device.id}/properties/`;
    const set = await call("POST", props, { key: "measurement_webhook_id", value: upper });
    expect(set.statusCode).toBe(201);
    // A free-text property keeps its value as sent: an upper-case UUID there still matches.
    await call("POST", props, { key: "note", value: "0B8F3C1E-6F1A-4C1E-9A53-0A1B2C3D4E5F" });
    const ids = async (query: string) =>
      ((await call("GET", `hwi-devices/?${query}`)).json() as { id: string }[]).map((d) => d.id);
    for (const value of [hook.id, upper, ` ${upper} `]) {
      const q = `properties__key=measurement_webhook_id&properties__value=${encodeURIComponent(value)}`;
      expect(await ids(q), value).toEqual([device.id]);
      expect(await ids(`properties__value=${encodeURIComponent(value)}`), value).toEqual([
        device.id,
      ]);
    }
    expect(await ids("properties__value=0B8F3C1E-6F1A-4C1E-9A53-0A1B2C3D4E5F")).toEqual([
      device.id,
    ]);
  });

  it("a search longer than any searched field: 400 keyed search, not SQLite's LIKE limit (500)", async () => {
    await activate(lab, {
      device: { name: BPM, hardware_uuid: GW },
      patient: { external_id: "P-1" },
    });
    const search = (text: string) => call("GET", `hwi-devices/?search=${text}`);
    // At the limit, wildcards escaped (twice as long in the pattern): matches nothing, 200.
    for (const text of ["a".repeat(MAX_SEARCH_LENGTH), "%25".repeat(MAX_SEARCH_LENGTH)]) {
      const res = await search(text);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual([]);
    }
    // 50,000 characters made a LIKE pattern SQLite refuses ("pattern too complex"): a 500.
    for (const text of [
      "a".repeat(MAX_SEARCH_LENGTH + 1),
      "a".repeat(50_000),
      "_".repeat(25_000),
    ]) {
      const res = await search(text);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({
        search: [`Ensure this field has no more than ${MAX_SEARCH_LENGTH} characters.`],
      });
    }
  });

  it("without page a flat list is truncated at 1000 devices (spec 8)", async () => {
    const a = lab.dev.account.id;
    for (let i = 0; i < 1001; i++) {
      await lab.store.devices.create(a, { name: "Vendor Scale", status: "Ready to Ship" });
    }
    expect((await call("GET", "hwi-devices/")).json()).toHaveLength(1000);
    const last = (await call("GET", "hwi-devices/?page=last&page_size=1000")).json();
    expect(last).toMatchObject({ count: 1001, next: null });
    expect(last.results).toHaveLength(1);
  }, 30_000);
});
