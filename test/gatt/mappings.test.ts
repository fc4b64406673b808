/**
 * Every profile of the catalogue: valid readings survive encode → decode unchanged, the device
 * sends only characteristics its profile declares, and the mapping names are the ones the
 * catalogue uses.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { MAPPINGS } from "../../src/gatt/mappings/registry.ts";
import { readingArb } from "./arbitraries.ts";

const catalogue = Catalogue.load();

describe("GATT mappings over the whole catalogue", () => {
  it("has a mapping for every profile and only mappings profiles use", () => {
    const used = new Set(catalogue.profiles.map((p) => p.gatt.mapping));
    for (const profile of catalogue.profiles)
      expect(mappingFor(profile).name).toBe(profile.gatt.mapping);
    expect([...MAPPINGS.keys()].sort()).toEqual([...used].sort());
  });

  for (const profile of catalogue.profiles) {
    describe(profile.name, () => {
      const mapping = mappingFor(profile);
      const declared = new Set(profile.gatt.characteristics.map((c) => c.uuid));

      it(`decode(encode(r)) deep-equals r (${profile.gatt.mapping})`, () => {
        fc.assert(
          fc.property(readingArb(profile), (reading) => {
            const values = mapping.encode(reading, profile);
            for (const v of values) expect(declared.has(v.uuid), v.uuid).toBe(true);
            expect(mapping.decode(values, profile)).toStrictEqual(reading);
          }),
          { numRuns: 300 },
        );
      });

      it("decodes values given in any order", () => {
        fc.assert(
          fc.property(readingArb(profile), fc.nat(), (reading, turn) => {
            const values = mapping.encode(reading, profile);
            const k = turn % values.length;
            const rotated = [...values.slice(k), ...values.slice(0, k)];
            expect(mapping.decode(rotated, profile)).toStrictEqual(reading);
          }),
          { numRuns: 50 },
        );
      });
    });
  }
});
