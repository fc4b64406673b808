/**
 * The GATT layout of each profile: the contract with the codecs in src/gatt, which implement
 * exactly these mappings and characteristics. Written out here by hand, not read from the YAML.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { GattCharacteristicSpec, Profile } from "../../src/catalogue/schema.ts";

const VENDOR_SERVICE = "7e3a0001-8c4d-4f6b-9a21-5d2c1b0e4f60";
type Char = Required<GattCharacteristicSpec>;
const char = (
  uuid: string,
  service: string,
  role: Char["role"],
  ...properties: Char["properties"]
) => ({
  uuid,
  service,
  role,
  properties,
});
const RECORD = char("7e3a0002-8c4d-4f6b-9a21-5d2c1b0e4f60", VENDOR_SERVICE, "record", "indicate");
const FEATURES = char("7e3a0004-8c4d-4f6b-9a21-5d2c1b0e4f60", VENDOR_SERVICE, "feature", "read");
const CONTEXT = char(
  "7e3a0003-8c4d-4f6b-9a21-5d2c1b0e4f60",
  VENDOR_SERVICE,
  "context",
  "read",
  "notify",
);
const BATTERY = char("2A19", "180F", "battery", "read", "notify");
// CTS 1.1 §3.1: Read and Notify mandatory, Write optional (the gateway sets the clock with it).
const TIME = char("2A2B", "1805", "time", "read", "write", "notify");
const racp = (service: string) => char("2A52", service, "racp", "write", "indicate");

const LAYOUT: Record<string, { service: string; characteristics: Char[] }> = {
  blood_pressure: {
    service: "1810",
    characteristics: [
      char("2A35", "1810", "measurement", "indicate"),
      char("2A49", "1810", "feature", "read"),
      BATTERY,
      CONTEXT,
      TIME,
    ],
  },
  weight_scale: {
    service: "181D",
    characteristics: [
      char("2A9D", "181D", "measurement", "indicate"),
      char("2A9E", "181D", "feature", "read"),
      BATTERY,
      CONTEXT,
      TIME,
    ],
  },
  pulse_oximeter: {
    service: "1822",
    characteristics: [
      char("2A5E", "1822", "measurement", "indicate"),
      char("2A5F", "1822", "measurement", "notify"),
      char("2A60", "1822", "feature", "read"),
      racp("1822"),
      BATTERY,
      CONTEXT,
      TIME,
    ],
  },
  pulse_oximeter_summary: { service: VENDOR_SERVICE, characteristics: [RECORD, FEATURES, TIME] },
  glucose: {
    service: "1808",
    characteristics: [
      char("2A18", "1808", "measurement", "notify"),
      char("2A34", "1808", "context", "notify"),
      char("2A51", "1808", "feature", "read"),
      racp("1808"),
      BATTERY,
      CONTEXT,
      TIME,
    ],
  },
  peak_flow: { service: VENDOR_SERVICE, characteristics: [RECORD, FEATURES, TIME] },
  fetal_doppler: { service: VENDOR_SERVICE, characteristics: [RECORD, FEATURES, TIME] },
  proximity_band: { service: VENDOR_SERVICE, characteristics: [RECORD, FEATURES, TIME] },
  // These two store readings offline: a RACP in our service fetches the stored records.
  inhaler: {
    service: VENDOR_SERVICE,
    characteristics: [RECORD, FEATURES, racp(VENDOR_SERVICE), TIME],
  },
  medication_cap: {
    service: VENDOR_SERVICE,
    characteristics: [RECORD, FEATURES, racp(VENDOR_SERVICE), TIME],
  },
};

const MAPPING: Record<string, string> = {
  "Vendor Scale": "weight_scale",
  "Vendor Scale XL": "weight_scale",
  "Vendor Bariatric Scale": "weight_scale",
  "Vendor Cellular Scale": "weight_scale",
  "Vendor Pulse Ox": "pulse_oximeter",
  "Vendor Cellular Pulse Ox": "pulse_oximeter_summary",
  "Vendor BPM - S": "blood_pressure",
  "Vendor BPM - Wide Range": "blood_pressure",
  "Vendor BPM - XL": "blood_pressure",
  "Vendor BPM - Wrist": "blood_pressure",
  "Vendor Cellular BPM": "blood_pressure",
  "Vendor Glucometer": "glucose",
  "Vendor Cellular Glucometer": "glucose",
  "Vendor Peak Flow Meter": "peak_flow",
  "Vendor Fetal Doppler": "fetal_doppler",
  "Vendor Inhaler Sensor": "inhaler",
  "Vendor Medication Cap": "medication_cap",
  "Vendor Proximity Band": "proximity_band",
};

/** Characteristics with their service spelled out, in a stable order. */
function layoutOf(profile: Profile) {
  const characteristics = profile.gatt.characteristics
    .map((c) => char(c.uuid, c.service ?? profile.gatt.service, c.role, ...c.properties))
    .sort((a, b) => `${a.service}/${a.uuid}`.localeCompare(`${b.service}/${b.uuid}`));
  return { service: profile.gatt.service, characteristics };
}

const profiles = Catalogue.load().profiles;

describe("GATT layout per profile", () => {
  it("covers every profile", () => {
    expect(profiles.map((p) => p.name).sort()).toEqual(Object.keys(MAPPING).sort());
  });

  it.each(profiles.map((p) => [p.name, p] as const))("%s", (name, profile) => {
    const mapping = MAPPING[name]!;
    expect(profile.gatt.mapping).toBe(mapping);
    const expected = LAYOUT[mapping]!;
    expect(layoutOf(profile)).toEqual({
      service: expected.service,
      characteristics: [...expected.characteristics].sort((a, b) =>
        `${a.service}/${a.uuid}`.localeCompare(`${b.service}/${b.uuid}`),
      ),
    });
  });
});
