/**
 * Invariants over the whole shipped catalogue (in the manner of zigbee-herdsman-converters'
 * test/checks.test.ts): each holds for every profile, and a failure names the profile and field.
 */
import { basename } from "node:path";
import { describe, expect, it } from "vitest";
import { Catalogue, DEFAULT_PROFILES_DIR } from "../../src/catalogue/catalogue.ts";
import { formatIssues } from "../../src/catalogue/loader.ts";
import type { Profile, ValueSpec } from "../../src/catalogue/schema.ts";
import { onStepGrid } from "../../src/catalogue/step-grid.ts";
import { loadProfiles } from "../../src/catalogue/validate.ts";
import { SIG, VENDOR } from "../../src/gatt/uuids.ts";

const loaded = loadProfiles(DEFAULT_PROFILES_DIR);
const catalogue = Catalogue.load();
const profiles = catalogue.profiles;
const each = profiles.map((p) => [p.name, p] as const);

function values(profile: Profile): Array<[string, ValueSpec]> {
  return profile.metrics.flatMap((m) => [
    [`${m.name}.value_1`, m.value_1] as [string, ValueSpec],
    ...(m.value_2 === null ? [] : [[`${m.name}.value_2`, m.value_2] as [string, ValueSpec]]),
  ]);
}

describe("every shipped profile file", () => {
  it("loads without a single issue", () => {
    expect(loaded.ok ? "" : formatIssues(loaded.issues)).toBe("");
  });

  it("is named after its device name in kebab case", () => {
    const mismatched = loaded.items
      .map(({ file, value }) => [basename(file), value.name] as const)
      .filter(([file, name]) => file !== `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.yaml`);
    expect(mismatched).toEqual([]);
  });

  it("has a unique name (legacy names included) and a unique sku", () => {
    const names = profiles.flatMap((p) => [p.name, ...p.legacy_names]);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(profiles.map((p) => p.sku)).size).toBe(profiles.length);
  });
});

describe.each(each)("%s", (_name, profile) => {
  it("defines every filter param a metric carries, and every one it defines is carried", () => {
    const defined = profile.filter_params.map((f) => f.key);
    const carried = new Set(profile.metrics.flatMap((m) => m.filter_params));
    expect([...carried].filter((key) => !defined.includes(key))).toEqual([]);
    expect(defined.filter((key) => !carried.has(key))).toEqual([]);
  });

  it("has measuring ranges with min <= max, both on the step grid", () => {
    const bad = values(profile).filter(
      ([, v]) => !(v.min <= v.max && onStepGrid(v.min, v.step) && onStepGrid(v.max, v.step)),
    );
    expect(bad.map(([where]) => where)).toEqual([]);
  });

  it("marks a metric vital exactly when its category is vital", () => {
    const bad = profile.metrics.filter((m) => m.vital !== (m.category === "vital"));
    expect(bad.map((m) => m.name)).toEqual([]);
  });

  it("uses only GATT UUIDs the lab knows, each once per service", () => {
    const known = new Set<string>([
      ...Object.values(SIG.characteristics),
      VENDOR.record,
      VENDOR.readingContext,
      VENDOR.features,
    ]);
    const services = new Set<string>([...Object.values(SIG.services), VENDOR.service]);
    const { gatt } = profile;
    expect(services.has(gatt.service)).toBe(true);
    const keys = gatt.characteristics.map((c) => `${c.service ?? gatt.service}/${c.uuid}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const c of gatt.characteristics) {
      expect(known.has(c.uuid), `characteristic ${c.uuid}`).toBe(true);
      expect(services.has(c.service ?? gatt.service), `service of ${c.uuid}`).toBe(true);
    }
  });

  it("has a Battery Level characteristic exactly when it reports battery_percentage", () => {
    const hasBatteryChar = profile.gatt.characteristics.some((c) => c.role === "battery");
    expect(hasBatteryChar).toBe(profile.metrics.some((m) => m.name === "battery_percentage"));
  });

  it("has a Record Access Control Point only if it stores readings offline", () => {
    const hasRacp = profile.gatt.characteristics.some((c) => c.role === "racp");
    if (hasRacp) expect(profile.stores_offline).toBe(true);
    // Our own record service has no other way to fetch stored records (SIG BP and weight
    // services re-indicate stored measurements on reconnection instead).
    if (profile.gatt.service === VENDOR.service && profile.stores_offline)
      expect(hasRacp).toBe(true);
  });

  it("accepts the device property measurement_webhook_id (spec 2.8, 6.3.2)", () => {
    expect(profile.device_properties).toContainEqual({
      key: "measurement_webhook_id",
      kind: "webhook_id",
    });
  });
});

describe("measuring ranges the lab chose", () => {
  const range = (name: string, metric: string) => {
    const { min, max, step } = catalogue.get(name).metrics.find((m) => m.name === metric)!.value_1;
    return { min, max, step };
  };

  it("keeps every weight within the imperial Weight Measurement field (uint16 x 0.01 lb)", () => {
    for (const profile of profiles.filter((p) => p.gatt.mapping === "weight_scale")) {
      const weight = profile.metrics.find((m) => m.name === "weight")!.value_1;
      expect(weight.max, profile.name).toBeLessThanOrEqual(655.35);
      expect(weight.step, profile.name).toBe(0.2);
    }
  });

  it("uses the device ranges of real meters for the vitals", () => {
    expect(range("Vendor Pulse Ox", "spO2")).toEqual({ min: 70, max: 100, step: 1 });
    expect(range("Vendor Pulse Ox", "perfusion_index")).toEqual({ min: 0.1, max: 20, step: 0.1 });
    expect(range("Vendor Pulse Ox", "pulse")).toEqual({ min: 30, max: 250, step: 1 });
    expect(range("Vendor Glucometer", "glucose")).toEqual({ min: 20, max: 600, step: 1 });
    expect(range("Vendor Peak Flow Meter", "peak_expiratory_flow")).toEqual({
      min: 50,
      max: 800,
      step: 1,
    });
    expect(range("Vendor Peak Flow Meter", "forced_expiratory_volume")).toEqual({
      min: 0.1,
      max: 8,
      step: 0.01,
    });
    expect(range("Vendor Fetal Doppler", "fetal_pulse")).toEqual({ min: 50, max: 240, step: 1 });
  });

  it("reports a glucose reading above range as the top value with the alert (spec 2.8)", () => {
    for (const name of ["Vendor Glucometer", "Vendor Cellular Glucometer"]) {
      const glucose = catalogue.get(name).metrics.find((m) => m.name === "glucose")!;
      expect(glucose.above_range).toEqual({
        reported_as: glucose.value_1.max,
        filter_param: "alert",
        value: "sensor_result_above_range",
      });
    }
  });
});
