/** fast-check arbitraries of the typed characteristic objects, for each codec's own round trip. */
import fc from "fast-check";
import type { DateTime } from "../../src/gatt/date-time.ts";
import { type Medfloat, SPECIAL } from "../../src/gatt/medfloat.ts";

/** Every BitFlags object over `names`. */
export function flagsArb<K extends string>(names: readonly K[]): fc.Arbitrary<Record<K, boolean>> {
  const shape = {} as Record<K, fc.Arbitrary<boolean>>;
  for (const name of names) shape[name] = fc.boolean();
  // fc.record builds null-prototype objects; the codecs build plain ones.
  return fc.record(shape).map((flags) => ({ ...flags }) as Record<K, boolean>);
}

/** A decimal m × 10^e exactly representable in a format with mantissa up to `maxMantissa`. */
export function decimalArb(
  maxMantissa: number,
  minExp: number,
  maxExp: number,
): fc.Arbitrary<number> {
  return fc
    .record({
      m: fc.integer({ min: -maxMantissa, max: maxMantissa }),
      e: fc.integer({ min: minExp, max: maxExp }),
    })
    .map(({ m, e }) => (m === 0 ? 0 : e >= 0 ? m * 10 ** e : m / 10 ** -e));
}

export const sfloatNumberArb = decimalArb(2045, -8, 7);
export const sfloatArb: fc.Arbitrary<Medfloat> = fc.oneof(
  { weight: 5, arbitrary: sfloatNumberArb },
  {
    weight: 1,
    arbitrary: fc.constantFrom(SPECIAL.nan, SPECIAL.nres, SPECIAL["+inf"], SPECIAL["-inf"]),
  },
);

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Valid Date Time values, unknown (0) year, month or day included. */
export const dateTimeArb: fc.Arbitrary<DateTime> = fc
  .record({
    year: fc.oneof(fc.constant(0), fc.integer({ min: 1582, max: 9999 })),
    month: fc.integer({ min: 0, max: 12 }),
    dayPick: fc.integer({ min: 0, max: 31 }),
    hours: fc.integer({ min: 0, max: 23 }),
    minutes: fc.integer({ min: 0, max: 59 }),
    seconds: fc.integer({ min: 0, max: 59 }),
  })
  .map(({ dayPick, ...rest }) => {
    const last =
      rest.month === 0
        ? 31
        : rest.month === 2 && rest.year !== 0 && !leap(rest.year)
          ? 28
          : DAYS[rest.month - 1]!;
    return {
      year: rest.year,
      month: rest.month,
      day: dayPick % (last + 1),
      hours: rest.hours,
      minutes: rest.minutes,
      seconds: rest.seconds,
    };
  });

/** `arb` or undefined. */
export function maybe<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.option(arb, { nil: undefined });
}
