import { RpmlabError } from "../core/errors.ts";

/**
 * IEEE 11073-20601 numeric types as Bluetooth carries them (GSS §2.2 "medfloat16"/"medfloat32"):
 * SFLOAT is 16 bits, a 4-bit signed exponent (base 10) over a 12-bit signed mantissa; FLOAT is 32
 * bits, an 8-bit signed exponent over a 24-bit signed mantissa. Both are little-endian on the wire
 * and represent decimal values exactly, which binary floating point cannot: the encoder looks for
 * an exponent at which the value is a whole mantissa, and refuses values it cannot carry exactly.
 *
 * Reading goes through the cursor (cursor.ts); this module only turns raw integers into numbers
 * and back.
 */

/** The special values of 11073-20601 §A.5 (exponent 0, mantissa at the ends of its range). */
export type MderSpecial = "nan" | "nres" | "+inf" | "-inf" | "reserved";

export interface SpecialValue {
  readonly special: MderSpecial;
}

/** A decoded SFLOAT or FLOAT: a number, or a tagged special value. */
export type Medfloat = number | SpecialValue;

/** One frozen object per special value, so decoding one allocates nothing. */
export const SPECIAL: Readonly<Record<MderSpecial, SpecialValue>> = Object.freeze({
  nan: Object.freeze({ special: "nan" }),
  nres: Object.freeze({ special: "nres" }),
  "+inf": Object.freeze({ special: "+inf" }),
  "-inf": Object.freeze({ special: "-inf" }),
  reserved: Object.freeze({ special: "reserved" }),
});

export function isSpecial(value: Medfloat): value is SpecialValue {
  return typeof value !== "number";
}

/** 11073-20601 NaN: "not a number", the device had no valid value to give. */
export function isNaNValue(value: Medfloat): boolean {
  return typeof value !== "number" && value.special === "nan";
}

interface MderFormat {
  readonly name: string;
  readonly mantissaBits: number;
  /** 2^(mantissaBits-1): mantissas at or above it are negative (two's complement). */
  readonly top: number;
  readonly exponentBits: number;
  /** Mask of the exponent field once shifted down. */
  readonly exponentMask: number;
  readonly minExponent: number;
  readonly maxExponent: number;
  /**
   * Largest mantissa magnitude the encoder writes. The five mantissas at the ends of the range
   * (+2046, +2047, -2046, -2047, -2048 for SFLOAT) are special values at exponent 0; many decoders
   * test the mantissa alone, so the encoder never writes them at any exponent.
   */
  readonly maxMantissa: number;
  /** Raw value → special, for the five raw values of §A.5. */
  readonly specials: ReadonlyMap<number, SpecialValue>;
  readonly rawOf: Readonly<Record<MderSpecial, number>>;
}

function format(name: string, mantissaBits: number, exponentBits: number): MderFormat {
  const top = 2 ** (mantissaBits - 1);
  const rawOf: Record<MderSpecial, number> = {
    nan: top - 1,
    nres: top,
    "+inf": top - 2,
    "-inf": top + 2,
    reserved: top + 1,
  };
  const specials = new Map<number, SpecialValue>();
  for (const key of Object.keys(rawOf) as MderSpecial[]) specials.set(rawOf[key], SPECIAL[key]);
  return {
    name,
    mantissaBits,
    top,
    exponentBits,
    exponentMask: 2 ** exponentBits - 1,
    minExponent: -(2 ** (exponentBits - 1)),
    maxExponent: 2 ** (exponentBits - 1) - 1,
    maxMantissa: top - 3,
    specials,
    rawOf,
  };
}

export const SFLOAT = format("SFLOAT", 12, 4);
export const FLOAT = format("FLOAT", 24, 8);

const POW10: number[] = [];
for (let i = 0; i <= 22; i++) POW10.push(10 ** i);

function pow10(k: number): number {
  return k <= 22 ? POW10[k]! : 10 ** k;
}

/** value / 10^e, computed so that whole results come out whole (10^k is exact up to k = 22). */
function scaled(value: number, exponent: number): number {
  return exponent <= 0 ? value * pow10(-exponent) : value / pow10(exponent);
}

/**
 * Binary floating point puts decimal values a few ulps off their decimal; a scaled value within a
 * relative 1e-12 of a whole non-zero number is that number (float error is near 1e-16, and
 * mantissas have at most 7 digits, so 1e-12 never merges two decimals the format tells apart).
 */
function isWhole(x: number): boolean {
  const whole = Math.round(x);
  return whole !== 0 && Math.abs(x - whole) <= 1e-12 * Math.abs(x);
}

/**
 * The exponent to write `value` at: the one nearest `preferred` at which the value is a whole
 * mantissa that fits. The exponents at which a value is whole form a range downwards from some
 * exponent, those at which it fits a range upwards, so walking from `preferred` finds the nearest
 * exponent of their overlap. NaN when they do not overlap.
 */
function pickExponent(value: number, preferred: number, f: MderFormat): number {
  let e = Math.min(f.maxExponent, Math.max(f.minExponent, preferred));
  if (isWhole(scaled(value, e))) {
    while (Math.abs(Math.round(scaled(value, e))) > f.maxMantissa) {
      e++;
      if (e > f.maxExponent || !isWhole(scaled(value, e))) return Number.NaN;
    }
    return e;
  }
  do {
    e--;
    if (e < f.minExponent) return Number.NaN;
  } while (!isWhole(scaled(value, e)));
  return Math.abs(Math.round(scaled(value, e))) <= f.maxMantissa ? e : Number.NaN;
}

/**
 * The raw integer of a value in format `f`. `preferredExponent` is the resolution the field is
 * usually written at (glucose in kg/L at -5, so 120 mg/dL is mantissa 120, exponent -5); the value
 * is written at the nearest exponent that carries it exactly. Throws E_CODEC_RANGE otherwise.
 */
export function toMderRaw(
  value: Medfloat,
  preferredExponent: number,
  f: MderFormat,
  what: string,
  field: string,
): number {
  if (typeof value !== "number") return f.rawOf[value.special];
  if (!Number.isFinite(value)) {
    throw new RpmlabError(
      "E_CODEC_RANGE",
      `${what}: ${field} is ${value}; write a special value ({special: "nan"}) instead`,
      { field },
    );
  }
  if (value === 0) {
    const e = Math.min(f.maxExponent, Math.max(f.minExponent, preferredExponent));
    return ((e & expMask(f)) << f.mantissaBits) >>> 0;
  }
  const e = pickExponent(value, preferredExponent, f);
  if (Number.isNaN(e)) {
    throw new RpmlabError(
      "E_CODEC_RANGE",
      `${what}: ${field} ${value} cannot be written exactly as ${f.name} (mantissa up to ±${f.maxMantissa}, exponent ${f.minExponent} to ${f.maxExponent})`,
      { field },
    );
  }
  const m = Math.round(scaled(value, e));
  const mantissaMask = 2 ** f.mantissaBits - 1;
  return (((e & expMask(f)) << f.mantissaBits) | (m & mantissaMask)) >>> 0;
}

function expMask(f: MderFormat): number {
  return f.exponentMask;
}

/** The exponent of a raw value (sign-extended), e.g. to re-encode a value as it was received. */
export function mderExponent(raw: number, f: MderFormat): number {
  const e = raw >>> f.mantissaBits;
  return e > f.maxExponent ? e - f.exponentMask - 1 : e;
}

/** The number or special value a raw SFLOAT/FLOAT integer stands for. */
export function fromMderRaw(raw: number, f: MderFormat): Medfloat {
  const top = f.top;
  // The five special values sit at exponent 0, mantissa top-2 … top+2 (raw, unsigned).
  if (raw >= top - 2 && raw <= top + 2) return f.specials.get(raw)!;
  let m = raw % (2 * top);
  if (m >= top) m -= 2 * top;
  if (m === 0) return 0;
  const e = mderExponent(raw, f);
  // Dividing two exact integers rounds once, to the double nearest the decimal: 120e-5 → 0.0012.
  return e >= 0 ? m * pow10(e) : m / pow10(-e);
}
