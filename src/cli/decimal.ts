/**
 * A decimal number as a user writes one: digits, a decimal point, an exponent (`0.5`, `60`,
 * `1e-3`). Number() alone also takes `0x3C` (60), `0b1`, `0o7`, `Infinity`, `""` and `" "` (0),
 * none of which a user means as a speed or a rate.
 */
const DECIMAL = /^(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/** The number `text` writes in decimal, else NaN (callers refuse it naming their flag). */
export function decimal(text: string): number {
  return DECIMAL.test(text) ? Number(text) : Number.NaN;
}
