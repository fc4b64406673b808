/**
 * The readings the generators (src/readings) produce for every device of the catalogue travel
 * through the GATT mappings unchanged: what a virtual device encodes, the ingestion core decodes.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { Rng } from "../../src/core/rng.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import type { PhysicalReading } from "../../src/readings/types.ts";

const catalogue = Catalogue.load();
const patients = PatientModels.load();

describe("generated readings through the GATT mappings", () => {
  for (const model of patients.models) {
    it(`every device of a ${model.name} patient, 30 days`, () => {
      const readings = generateReadings({
        devices: catalogue.profiles,
        patient: model,
        rng: new Rng(`gatt/${model.name}`),
        days: 30,
      });
      expect(readings.length).toBeGreaterThan(0);
      for (const generated of readings) {
        const profile = catalogue.get(generated.device);
        const reading: PhysicalReading = {
          timestamp: generated.timestamp,
          timezone_offset: generated.timezone_offset,
          records: generated.records,
        };
        const mapping = mappingFor(profile);
        expect(mapping.decode(mapping.encode(reading, profile), profile)).toStrictEqual(reading);
      }
    });
  }
});
