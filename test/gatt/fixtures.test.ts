/**
 * Byte fixtures with provenance (test/fixtures/gatt/*.json): each decodes to its expectation —
 * a typed value, a reading, or an RpmlabError naming the field and byte offset — and each valid
 * canonical one encodes back to the same bytes.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { Profile } from "../../src/catalogue/schema.ts";
import { RpmlabError } from "../../src/core/errors.ts";
import {
  decodeBatteryLevel,
  encodeBatteryLevel,
} from "../../src/gatt/characteristics/battery-level.ts";
import * as bp from "../../src/gatt/characteristics/blood-pressure.ts";
import {
  decodeCurrentTime,
  encodeCurrentTime,
} from "../../src/gatt/characteristics/current-time.ts";
import {
  type DeviceInformationUuid,
  decodeDeviceInformationString,
  encodeDeviceInformationString,
} from "../../src/gatt/characteristics/device-information.ts";
import * as gc from "../../src/gatt/characteristics/glucose-context.ts";
import * as gf from "../../src/gatt/characteristics/glucose-feature.ts";
import * as gm from "../../src/gatt/characteristics/glucose-measurement.ts";
import * as plxf from "../../src/gatt/characteristics/plx-features.ts";
import * as plx from "../../src/gatt/characteristics/plx-measurement.ts";
import { decodeRacp, encodeRacp } from "../../src/gatt/characteristics/racp.ts";
import * as wt from "../../src/gatt/characteristics/weight.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { VENDOR } from "../../src/gatt/uuids.ts";
import { decodeVendorFeatures, encodeVendorFeatures } from "../../src/gatt/vendor/features.ts";
import {
  decodeReadingContext,
  encodeReadingContext,
} from "../../src/gatt/vendor/reading-context.ts";
import { decodeVendorRecord, encodeVendorRecord } from "../../src/gatt/vendor/record.ts";
import type { PhysicalReading } from "../../src/readings/types.ts";

interface Fixture {
  name: string;
  provenance: string;
  characteristic: string;
  hex?: string;
  values?: Array<{ uuid: string; hex: string }>;
  profile?: string;
  sequence?: number;
  /** false: a valid value that the encoder writes differently (other units or exponents). */
  canonical?: boolean;
  expect: unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: a table of codecs of different value types
type Codec = { decode(b: Uint8Array, p: Profile): any; encode(v: any, p: Profile): Uint8Array };
const codec = <T>(decode: (b: Uint8Array) => T, encode: (v: T) => Uint8Array): Codec => ({
  decode,
  encode,
});
const dis = (uuid: DeviceInformationUuid): Codec => ({
  decode: (b) => decodeDeviceInformationString(uuid, b),
  encode: (v) => encodeDeviceInformationString(uuid, v),
});

const CODECS: Record<string, Codec> = {
  "2A35": codec(bp.decodeBloodPressureMeasurement, bp.encodeBloodPressureMeasurement),
  "2A49": codec(bp.decodeBloodPressureFeature, bp.encodeBloodPressureFeature),
  "2A9D": codec(wt.decodeWeightMeasurement, wt.encodeWeightMeasurement),
  "2A9E": codec(wt.decodeWeightScaleFeature, wt.encodeWeightScaleFeature),
  "2A18": codec(gm.decodeGlucoseMeasurement, gm.encodeGlucoseMeasurement),
  "2A34": codec(gc.decodeGlucoseMeasurementContext, gc.encodeGlucoseMeasurementContext),
  "2A51": codec(gf.decodeGlucoseFeature, gf.encodeGlucoseFeature),
  "2A52": codec(decodeRacp, encodeRacp),
  "2A5E": codec(plx.decodePlxSpotCheckMeasurement, plx.encodePlxSpotCheckMeasurement),
  "2A5F": codec(plx.decodePlxContinuousMeasurement, plx.encodePlxContinuousMeasurement),
  "2A60": codec(plxf.decodePlxFeatures, plxf.encodePlxFeatures),
  "2A19": codec(decodeBatteryLevel, encodeBatteryLevel),
  "2A2B": codec(decodeCurrentTime, encodeCurrentTime),
  "2A29": dis("2A29"),
  "2A24": dis("2A24"),
  "2A25": dis("2A25"),
  "2A26": dis("2A26"),
  "2A27": dis("2A27"),
  "2A28": dis("2A28"),
  [VENDOR.readingContext]: codec(decodeReadingContext, encodeReadingContext),
  [VENDOR.record]: { decode: decodeVendorRecord, encode: encodeVendorRecord },
  [VENDOR.features]: codec(decodeVendorFeatures, encodeVendorFeatures),
};

const dir = fileURLToPath(new URL("../fixtures/gatt/", import.meta.url));
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .sort();
const catalogue = Catalogue.load();
const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex, "hex"));
const hexOf = (b: Uint8Array) => Buffer.from(b).toString("hex");

function expectedError(
  expected: unknown,
): { code: string; field: string; offset?: number } | undefined {
  if (typeof expected !== "object" || expected === null || !("error" in expected)) return undefined;
  return (expected as { error: { code: string; field: string; offset?: number } }).error;
}

function checkError(run: () => unknown, error: { code: string; field: string; offset?: number }) {
  let thrown: unknown;
  try {
    run();
  } catch (e) {
    thrown = e;
  }
  expect(thrown, "the value decoded; an error was expected").toBeInstanceOf(RpmlabError);
  const e = thrown as RpmlabError;
  expect({ code: e.code, field: e.details.field }).toEqual({
    code: error.code,
    field: error.field,
  });
  expect(e.message).toContain(error.field);
  if (error.offset !== undefined) {
    expect(e.details.offset).toBe(error.offset);
    expect(e.message).toContain(`byte ${error.offset}`);
  }
}

describe("GATT byte fixtures", () => {
  it("has fixtures, each with a provenance", () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      for (const f of JSON.parse(readFileSync(dir + file, "utf8")) as Fixture[]) {
        expect(f.provenance, `${file}: ${f.name}`).toMatch(/^(synthetic:|captured:)\S/);
      }
    }
  });

  for (const file of files) {
    describe(file, () => {
      for (const f of JSON.parse(readFileSync(dir + file, "utf8")) as Fixture[]) {
        it(f.name, () => {
          const profile = f.profile === undefined ? undefined : catalogue.get(f.profile);
          const error = expectedError(f.expect);
          if (f.characteristic.startsWith("mapping:")) {
            const p = profile!;
            const mapping = mappingFor(p);
            expect(`mapping:${mapping.name}`).toBe(f.characteristic);
            const values = f.values!.map((v) => ({ uuid: v.uuid, value: bytes(v.hex) }));
            if (error !== undefined) return checkError(() => mapping.decode(values, p), error);
            expect(mapping.decode(values, p)).toStrictEqual(f.expect);
            if (f.canonical !== false) {
              const encoded = mapping.encode(f.expect as PhysicalReading, p, f.sequence);
              expect(encoded.map((v) => ({ uuid: v.uuid, hex: hexOf(v.value) }))).toEqual(f.values);
            }
            return;
          }
          const c = CODECS[f.characteristic];
          expect(c, `no codec for ${f.characteristic}`).toBeDefined();
          if (error !== undefined)
            return checkError(() => c!.decode(bytes(f.hex!), profile!), error);
          expect(c!.decode(bytes(f.hex!), profile!)).toEqual(f.expect);
          if (f.canonical !== false) expect(hexOf(c!.encode(f.expect, profile!))).toBe(f.hex);
        });
      }
    });
  }
});
