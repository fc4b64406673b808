/**
 * Readings of standard Bluetooth SIG peripherals (README "Real hardware"): a cuff, oximeter,
 * glucometer or scale that sends its SIG characteristics and none of rpmlab's vendor values.
 * Built here from an rpmlab reading with the vendor Reading Context (and the optional Glucose
 * Measurement Context) taken out: the values and the device's wall-clock time survive; the
 * clock is taken as UTC, and what only the dropped values carried is absent.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { MS_PER_HOUR } from "../../src/core/time.ts";
import { type CharacteristicValue, mappingFor } from "../../src/gatt/mapping.ts";
import { SIG, VENDOR } from "../../src/gatt/uuids.ts";
import type { PhysicalReading } from "../../src/readings/types.ts";
import { readingArb } from "./arbitraries.ts";

const catalogue = Catalogue.load();
const DROPPED = new Set([VENDOR.readingContext, SIG.characteristics.glucoseMeasurementContext]);
/** Filter params only the dropped values carry. */
const VENDOR_ONLY = new Set(["measurement_index", "meal_context"]);

/** A Glucose Measurement that announces no context: flags bit 4 clear (GLS 2A18). */
function withoutContext(v: CharacteristicValue): CharacteristicValue {
  const value = Uint8Array.from(v.value);
  value[0]! &= ~0x10;
  return { ...v, value };
}

function asSigPeripheral(reading: PhysicalReading): PhysicalReading {
  return {
    // No Reading Context: the device's clock is read as UTC.
    timestamp: reading.timestamp + reading.timezone_offset * MS_PER_HOUR,
    timezone_offset: 0,
    records: reading.records.map((r) => {
      const kept = Object.entries(r.filter_params ?? {}).filter(([k]) => !VENDOR_ONLY.has(k));
      return { ...r, filter_params: kept.length === 0 ? null : Object.fromEntries(kept) };
    }),
  };
}

const sigProfiles = catalogue.profiles.filter((p) =>
  ["blood_pressure", "pulse_oximeter", "glucose", "weight_scale"].includes(p.gatt.mapping),
);

describe("a standard SIG peripheral's reading, without rpmlab's vendor values", () => {
  it("covers the four SIG mappings", () => {
    expect(new Set(sigProfiles.map((p) => p.gatt.mapping)).size).toBe(4);
  });

  for (const profile of sigProfiles) {
    it(`decodes: ${profile.name} (${profile.gatt.mapping})`, () => {
      const mapping = mappingFor(profile);
      fc.assert(
        fc.property(readingArb(profile), (reading) => {
          const values = mapping
            .encode(reading, profile)
            .filter((v) => !DROPPED.has(v.uuid))
            .map((v) =>
              v.uuid === SIG.characteristics.glucoseMeasurement ? withoutContext(v) : v,
            );
          expect(mapping.decode(values, profile)).toStrictEqual(asSigPeripheral(reading));
        }),
        { numRuns: 100 },
      );
    });
  }
});
