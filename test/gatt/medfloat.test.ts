import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isRpmlabError } from "../../src/core/errors.ts";
import { ByteReader, ByteWriter } from "../../src/gatt/cursor.ts";
import {
  FLOAT,
  fromMderRaw,
  mderExponent,
  SFLOAT,
  SPECIAL,
  toMderRaw,
} from "../../src/gatt/medfloat.ts";
import { decimalArb, sfloatNumberArb } from "./value-arbitraries.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const sfloatBytes = (v: number | (typeof SPECIAL)["nan"], exponent = 0) => {
  const w = new ByteWriter(2, "test").start();
  w.sfloat(v, "value", exponent);
  return hex(w.finish());
};

describe("SFLOAT (IEEE 11073-20601 16-bit)", () => {
  it("writes exact mantissa and exponent, little-endian", () => {
    expect(sfloatBytes(120)).toBe("7800"); // m 120, e 0
    expect(sfloatBytes(0.0012, -5)).toBe("78b0"); // m 120, e -5: 120 mg/dL in kg/L
    expect(sfloatBytes(0.0012)).toBe("0cc0"); // nearest exponent to 0 that is exact: 12e-4
    expect(sfloatBytes(2.5)).toBe("19f0"); // 25e-1
    expect(sfloatBytes(-1)).toBe("ff0f"); // m -1 (0xFFF), e 0
    expect(sfloatBytes(3000)).toBe("2c11"); // 300e1: too big for e 0
    expect(sfloatBytes(0, -2)).toBe("00e0"); // zero at the preferred exponent
    expect(sfloatBytes(1e9)).toBe("e863"); // 1000e6: the exponent nearest 0 that fits
  });

  it("writes the special values as their raw codes", () => {
    expect(sfloatBytes(SPECIAL.nan)).toBe("ff07");
    expect(sfloatBytes(SPECIAL.nres)).toBe("0008");
    expect(sfloatBytes(SPECIAL["+inf"])).toBe("fe07");
    expect(sfloatBytes(SPECIAL["-inf"])).toBe("0208");
  });

  it("refuses values it cannot carry exactly, naming the field", () => {
    for (const v of [1 / 3, 20471, 2046, 1e11, 0.123456789, Number.NaN, Number.POSITIVE_INFINITY]) {
      const w = new ByteWriter(2, "Test Characteristic").start();
      let error: unknown;
      try {
        w.sfloat(v, "systolic");
      } catch (e) {
        error = e;
      }
      expect(isRpmlabError(error, "E_CODEC_RANGE"), String(v)).toBe(true);
      expect((error as Error).message).toContain("systolic");
    }
  });

  it("reads numbers and tagged special values; the reserved value fails with its offset", () => {
    expect(fromMderRaw(0x0078, SFLOAT)).toBe(120);
    expect(fromMderRaw(0xb078, SFLOAT)).toBe(0.0012);
    expect(fromMderRaw(0xf019, SFLOAT)).toBe(2.5);
    expect(fromMderRaw(0x0fff, SFLOAT)).toBe(-1);
    expect(fromMderRaw(0x07ff, SFLOAT)).toBe(SPECIAL.nan);
    expect(fromMderRaw(0x0800, SFLOAT)).toBe(SPECIAL.nres);
    expect(fromMderRaw(0x07fe, SFLOAT)).toBe(SPECIAL["+inf"]);
    expect(fromMderRaw(0x0802, SFLOAT)).toBe(SPECIAL["-inf"]);
    // Mantissa 2047 at exponent 1 is a number, not NaN (specials are at exponent 0).
    expect(fromMderRaw(0x17ff, SFLOAT)).toBe(20470);
    const r = new ByteReader(Uint8Array.of(0x00, 0x01, 0x08), "Test Characteristic");
    r.u8("flags");
    expect(() => r.sfloat("diastolic")).toThrowError(
      /diastolic at byte 1: SFLOAT 0x0801 is a reserved value/,
    );
  });

  it("round-trips every decimal it can carry", () => {
    fc.assert(
      fc.property(sfloatNumberArb, fc.integer({ min: -8, max: 7 }), (v, preferred) => {
        const raw = toMderRaw(v, preferred, SFLOAT, "test", "value");
        expect(fromMderRaw(raw, SFLOAT)).toBe(v);
      }),
      { numRuns: 2000 },
    );
  });

  it("re-encodes a received raw value to the same bytes at its own exponent", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff }), (raw) => {
        const m = raw & 0xfff;
        const mantissa = m >= 0x800 ? m - 0x1000 : m;
        fc.pre(Math.abs(mantissa) <= 2045);
        const v = fromMderRaw(raw, SFLOAT);
        expect(toMderRaw(v, mderExponent(raw, SFLOAT), SFLOAT, "test", "value")).toBe(
          mantissa === 0 ? raw & 0xf000 : raw,
        );
      }),
      { numRuns: 2000 },
    );
  });
});

describe("FLOAT (IEEE 11073-20601 32-bit)", () => {
  const floatBytes = (v: number, exponent = 0) => {
    const w = new ByteWriter(4, "test").start();
    w.float(v, "value", exponent);
    return hex(w.finish());
  };

  it("writes exact mantissa and exponent, little-endian", () => {
    expect(floatBytes(1.23, -2)).toBe("7b0000fe"); // 123e-2
    expect(floatBytes(450)).toBe("c2010000"); // 450e0
    expect(floatBytes(-0.5, -1)).toBe("fbffffff"); // -5e-1
    expect(floatBytes(65432.1, -1)).toBe("f1fb09ff"); // 654321e-1
  });

  it("reads the special values", () => {
    expect(fromMderRaw(0x007fffff, FLOAT)).toBe(SPECIAL.nan);
    expect(fromMderRaw(0x00800000, FLOAT)).toBe(SPECIAL.nres);
    expect(fromMderRaw(0x007ffffe, FLOAT)).toBe(SPECIAL["+inf"]);
    expect(fromMderRaw(0x00800002, FLOAT)).toBe(SPECIAL["-inf"]);
    expect(fromMderRaw(0x00800001, FLOAT)).toBe(SPECIAL.reserved);
  });

  it("round-trips every decimal it can carry", () => {
    fc.assert(
      fc.property(
        decimalArb(8_388_605, -20, 20),
        fc.integer({ min: -6, max: 6 }),
        (v, preferred) => {
          expect(fromMderRaw(toMderRaw(v, preferred, FLOAT, "test", "value"), FLOAT)).toBe(v);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
