import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { Profile } from "../../src/catalogue/schema.ts";
import { DEVICE_TYPES, LEGACY_NAMES } from "./spec-2-8.ts";
import { specDrift } from "./spec-drift.ts";

const catalogue = Catalogue.load();

describe("the shipped catalogue matches spec 2.8", () => {
  it("has no drift from the spec's tables (device types, metrics, filter params, cuffs)", () => {
    expect(specDrift(catalogue.profiles)).toEqual([]);
  });

  it("has one profile per device name of spec 2.4/2.8, eighteen in all", () => {
    const names = DEVICE_TYPES.flatMap((t) => t.profiles).sort();
    expect(catalogue.profiles.map((p) => p.name).sort()).toEqual(names);
    expect(names).toHaveLength(18);
  });

  it("resolves the legacy name Vendor BPM - L to Vendor BPM - Wide Range (spec 2.4)", () => {
    for (const [legacy, current] of Object.entries(LEGACY_NAMES)) {
      expect(catalogue.isLegacyName(legacy)).toBe(true);
      expect(catalogue.get(legacy).name).toBe(current);
    }
  });

  it("gives direct-cellular types no sensor code and every BPM the code 10", () => {
    const cellular = catalogue.profiles.filter((p) => p.connectivity === "cellular");
    expect(cellular.map((p) => p.sensor_code)).toEqual([null, null, null, null]);
    expect(catalogue.withSensorCode("10").map((p) => p.name)).toEqual([
      "Vendor BPM - S",
      "Vendor BPM - Wide Range",
      "Vendor BPM - Wrist",
      "Vendor BPM - XL",
    ]);
  });
});

/** A copy of one shipped profile with a change, as a careless edit of its YAML would make. */
function drifted(name: string, edit: (profile: Profile) => void): Profile[] {
  return catalogue.profiles.map((p) => {
    if (p.name !== name) return p;
    const copy = structuredClone(p);
    edit(copy);
    return copy;
  });
}

const metricOf = (p: Profile, name: string) => p.metrics.find((m) => m.name === name)!;

describe("the spec comparison catches drift", () => {
  it.each<[string, string, (p: Profile) => void, string]>([
    [
      "a wrong sensor code",
      "Vendor Scale",
      (p) => (p.sensor_code = "43"),
      "Vendor Scale: sensor_code",
    ],
    ["a vital flag", "Vendor Pulse Ox", (p) => (metricOf(p, "spO2").vital = false), "spO2.vital"],
    ["a dropped metric", "Vendor Glucometer", (p) => p.metrics.pop(), "Vendor Glucometer: metrics"],
    [
      "a value 2 the spec does not give",
      "Vendor BPM - XL",
      (p) => (metricOf(p, "pulse").value_2 = metricOf(p, "pulse").value_1),
      "pulse.value_2",
    ],
    [
      "an event value range",
      "Vendor Medication Cap",
      (p) => (metricOf(p, "no_measurement_event").value_1.min = 0),
      "no_measurement_event.value_1 (event values)",
    ],
    [
      "units",
      "Vendor Cellular Scale",
      (p) => (metricOf(p, "weight").value_1.units = "kg"),
      "weight.value_1.units",
    ],
    [
      "an allowed value",
      "Vendor Glucometer",
      (p) => {
        const param = p.filter_params.find((f) => f.key === "meal_context");
        if (param?.kind === "enum") param.values = ["before meal", "after meal"];
      },
      "filter_params.meal_context.values",
    ],
    [
      "a looser pattern",
      "Vendor Inhaler Sensor",
      (p) => {
        const param = p.filter_params.find((f) => f.key === "serial_number");
        if (param?.kind === "pattern") param.pattern = "^[A-Za-z0-9]+$";
      },
      'filter_params.serial_number.pattern is "accepts \\"A1B2C3D4E\\""',
    ],
    [
      "a carried key",
      "Vendor Peak Flow Meter",
      (p) => (metricOf(p, "peak_expiratory_flow").filter_params = []),
      "peak_expiratory_flow.filter_params",
    ],
    [
      "offline storage",
      "Vendor Bariatric Scale",
      (p) => (p.stores_offline = true),
      "stores_offline",
    ],
    ["a cuff range", "Vendor BPM - S", (p) => (p.cuff_cm = [17, 36]), "Vendor BPM - S: cuff_cm"],
    [
      "the legacy name",
      "Vendor BPM - XL",
      (p) => p.legacy_names.push("Vendor BPM - L"),
      "legacy_names",
    ],
    [
      "the cadence",
      "Vendor Medication Cap",
      (p) => (p.cadence = { kind: "per_reading" }),
      "cadence",
    ],
    [
      "the webhook property",
      "Vendor Fetal Doppler",
      (p) => (p.device_properties = []),
      "device_properties",
    ],
  ])("%s", (_what, name, edit, expected) => {
    const drift = specDrift(drifted(name, edit));
    expect(drift.join("\n")).toContain(expected);
    expect(drift.every((line) => line.startsWith(`${name}: `))).toBe(true);
  });

  it("names a profile that is missing and one the spec does not list", () => {
    const others = catalogue.profiles.filter((p) => p.name !== "Vendor Proximity Band");
    const extra = { ...catalogue.get("Vendor Scale"), name: "Vendor Smart Mirror" };
    expect(specDrift([...others, extra])).toEqual([
      "Vendor Smart Mirror: not a device type of spec 2.8",
      'Vendor Proximity Band: missing (spec 2.8 row "Proximity band")',
    ]);
  });
});
