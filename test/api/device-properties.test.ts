import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Lab, makeLab } from "./helpers.ts";
import { activate, BPM, catalogue, GW, hwiCall } from "./hwi-fixtures.ts";

const UNKNOWN = "00000000-0000-4000-8000-000000000000";

/** Spec 2.4 `properties`, 2.8 and 6.3.2 (measurement_webhook_id); wire-formats routing. */
describe("hwi-devices/{id}/properties/", () => {
  let lab: Lab;
  let call: ReturnType<typeof hwiCall>;
  let device: string;
  beforeEach(async () => {
    lab = await makeLab();
    call = hwiCall(lab);
    device = (await activate(lab, { device: { name: BPM, hardware_uuid: GW } })).id;
  });
  afterEach(() => lab.close());

  const props = (rest = "") => `hwi-devices/${device}/properties/${rest}`;

  it("POST sets (201), PUT replaces (200), GET lists, and the device record shows them", async () => {
    expect((await call("GET", props())).json()).toEqual([]);
    const created = await call("POST", props(), { key: "colour", value: "blue" });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ key: "colour", value: "blue" });
    const replaced = await call("PUT", props(), { key: "colour", value: " red " });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toEqual({ key: "colour", value: "red" });
    expect((await call("GET", props())).json()).toEqual([{ key: "colour", value: "red" }]);
    expect((await call("GET", props("colour/"))).json()).toEqual({ key: "colour", value: "red" });
    expect((await call("GET", `hwi-devices/${device}/`)).json().properties).toEqual([
      { key: "colour", value: "red" },
    ]);
  });

  it("measurement_webhook_id names a MEASUREMENT webhook of the account, or is '' (spec 6.3.2)", async () => {
    const hook = (await call("POST", "webhooks/", { endpoint: "https://c.example/m" })).json();
    const other = (
      await call("POST", "webhooks/", { endpoint: "https://c.example/f", event: "FULFILLMENT" })
    ).json();
    const set = (value: unknown) => call("POST", props(), { key: "measurement_webhook_id", value });
    expect((await set(hook.id.toUpperCase())).json()).toEqual({
      key: "measurement_webhook_id",
      value: hook.id,
    });
    for (const bad of ["not-a-uuid", UNKNOWN, other.id]) {
      const res = await set(bad);
      expect(res.statusCode).toBe(400);
      expect(Object.keys(res.json())).toEqual(["value"]);
    }
    expect((await set("")).json()).toEqual({ key: "measurement_webhook_id", value: "" });
  });

  it("400 keyed by field for a bad body", async () => {
    const res = await call("POST", props(), { key: "", value: 5 });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ key: ["This field may not be blank."] });
    expect((await call("PUT", props(), {})).json()).toEqual({
      key: ["This field is required."],
      value: ["This field is required."],
    });
    expect((await call("POST", props(), "x")).json()).toEqual({
      non_field_errors: ["Invalid data. Expected a dictionary, but got str."],
    });
  });

  it("DELETE by key answers 204; unknown keys and devices 404 with Django's texts", async () => {
    await call("POST", props(), { key: "colour", value: "blue" });
    const deleted = await call("DELETE", props("colour/"));
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe("");
    const again = await call("DELETE", props("colour/"));
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ detail: "No DeviceProperty matches the given query." });
    expect((await call("GET", props("colour/"))).statusCode).toBe(404);
    const noDevice = await call("GET", `hwi-devices/${UNKNOWN}/properties/`);
    expect(noDevice.json()).toEqual({ detail: "No Device matches the given query." });
    expect((await call("POST", `hwi-devices/${UNKNOWN}/properties/`, {})).statusCode).toBe(404);
    expect((await call("DELETE", `hwi-devices/${UNKNOWN}/properties/x/`)).json()).toEqual({
      detail: "No Device matches the given query.",
    });
  });
});

/** Spec 4.3 hwi-device-types; wire-formats "Devices" element shape. */
describe("hwi-device-types/", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab();
  });
  afterEach(() => lab.close());

  it("lists every current name with the wire-formats shape; legacy names are not listed", async () => {
    const res = await hwiCall(lab)("GET", "hwi-device-types/");
    expect(res.statusCode).toBe(200);
    const types = res.json() as Record<string, unknown>[];
    expect(types.map((t) => t.name)).toEqual(catalogue.profiles.map((p) => p.name));
    expect(types.map((t) => t.name)).not.toContain("Vendor BPM - L");
    for (const t of types) {
      expect(Object.keys(t)).toEqual([
        "id",
        "name",
        "sensor_code",
        "sku",
        "modules",
        "supply_types",
        "metrics",
      ]);
      for (const m of t.metrics as Record<string, unknown>[]) {
        expect(Object.keys(m)).toEqual([
          "id",
          "name",
          "is_vital",
          "primary_display_name",
          "primary_units",
          "secondary_display_name",
          "secondary_units",
          "time_series_data",
          "unified_display_name",
        ]);
      }
    }
    const bpm = types.find((t) => t.name === BPM)!;
    expect(bpm).toMatchObject({ sensor_code: "10", modules: ["gateway"] });
    // The ASR supply types that fit it (asr-supply-types.test.ts checks them in full).
    expect((bpm.supply_types as string[]).length).toBeGreaterThan(0);
    expect(bpm.metrics).toContainEqual(
      expect.objectContaining({
        name: "blood_pressure",
        is_vital: true,
        primary_display_name: "Systolic",
        primary_units: "mmHg",
        secondary_display_name: "Diastolic",
        secondary_units: "mmHg",
        time_series_data: true,
        unified_display_name: "Blood Pressure",
      }),
    );
    expect(bpm.metrics).toContainEqual(
      expect.objectContaining({ name: "irregular_heartbeat", time_series_data: false }),
    );
    const cellular = types.find((t) => t.name === "Vendor Cellular BPM")!;
    expect(cellular).toMatchObject({ sensor_code: null, modules: ["cellular"] });
  });

  it("ids are stable UUIDs, unique per type, one per metric name", async () => {
    const first = (await hwiCall(lab)("GET", "hwi-device-types/")).json();
    const other = await makeLab();
    const second = (await hwiCall(other)("GET", "hwi-device-types/")).json();
    await other.close();
    expect(second).toEqual(first);
    const ids = first.map((t: { id: string }) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-/);
    const pulseIds = new Set(
      first.flatMap((t: { metrics: { name: string; id: string }[] }) =>
        t.metrics.filter((m) => m.name === "pulse").map((m) => m.id),
      ),
    );
    expect(pulseIds.size).toBe(1);
  });
});
