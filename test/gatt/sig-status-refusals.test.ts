/**
 * Values a real SIG peripheral sends whose numbers are not a patient's reading: the mapping
 * refuses them with an RpmlabError naming the field and the byte at fault, rather than turning
 * them into a reading with a wrong value or a wrong time.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { RpmlabError } from "../../src/core/errors.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { SIG } from "../../src/gatt/uuids.ts";

const catalogue = Catalogue.load();

function refusal(run: () => unknown): RpmlabError {
  try {
    run();
  } catch (error) {
    if (error instanceof RpmlabError) return error;
    throw error;
  }
  throw new Error("expected an RpmlabError");
}

/** 2024-10-16 04:10:00 as a GSS Date Time. */
const DATE_TIME = [0xe8, 0x07, 10, 16, 4, 10, 0];
/** SFLOAT 97 (%) and 72 (bpm), exponent 0. */
const SPO2_PR = [97, 0x00, 72, 0x00];

describe("pulse_oximeter mapping, PLX Spot-check Measurement (2A5E) of a real oximeter", () => {
  const profile = catalogue.get("Vendor Pulse Ox");
  const mapping = mappingFor(profile);
  const decode = (bytes: number[]) =>
    mapping.decode(
      [{ uuid: SIG.characteristics.plxSpotCheckMeasurement, value: Uint8Array.from(bytes) }],
      profile,
    );

  it("decodes a timestamped spot-check with a clean Measurement Status", () => {
    const reading = decode([0x03, ...SPO2_PR, ...DATE_TIME, 0x80, 0x00]);
    expect(reading.timestamp).toBe(Date.UTC(2024, 9, 16, 4, 10));
    expect(reading.records.map((r) => [r.metric, r.value_1])).toEqual([
      ["spO2", 97],
      ["pulse", 72],
    ]);
  });

  it("refuses a timestamp the device says its clock was not set for (flags bit 4)", () => {
    const error = refusal(() => decode([0x11, ...SPO2_PR, ...DATE_TIME]));
    expect(error.code).toBe("E_CODEC_FLAGS");
    expect(error.details).toMatchObject({ field: "flags", offset: 0 });
    expect(error.message).toContain("clock is not set");
  });

  // PLXS 1.0.1 Measurement Status: bits 10, 11, 13 and 15 say the values are no patient's.
  for (const [bit, what] of [
    [10, "data for demonstration"],
    [11, "data for testing"],
    [13, "measurement unavailable"],
    [15, "invalid measurement detected"],
  ] as const) {
    it(`refuses a value whose Measurement Status says ${what} (bit ${bit})`, () => {
      const status = 1 << bit;
      const error = refusal(() =>
        decode([0x03, ...SPO2_PR, ...DATE_TIME, status & 0xff, status >>> 8]),
      );
      expect(error.code).toBe("E_CODEC_RESERVED");
      expect(error.details).toMatchObject({ field: "measurement_status", offset: 12 });
      expect(error.message).toContain(what);
    });
  }
});
