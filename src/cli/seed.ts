import { quotedValue } from "../core/clip.ts";
import { RpmlabError } from "../core/errors.ts";

/**
 * A number as YAML 1.2's core schema reads an unquoted `seed:` (the scenario loader's): decimal
 * `42`, `-7`, `42.0`, `1e3`; hexadecimal `0x2A` and octal `0o52`, with that prefix in lower case
 * and no sign (`-0x2A`, `0X2A` are text there); `.inf` and `.nan`, which no seed takes.
 */
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;
const HEX_OR_OCTAL = /^(0x[0-9a-fA-F]+|0o[0-7]+)$/;
const NOT_A_NUMBER = /^([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$/;

/**
 * Every `--seed` (run, demo, readings, device, gateway, controller) as a scenario file's `seed:`
 * reads it (README "Scenario files"): a number (`0x2A` too) is that number, and must be a whole one from
 * −(2⁵³−1) to 2⁵³−1, which the file's schema, JSON and the report keep exactly (`42.0` is 42;
 * `42.5` and 12345678901234567, which a file refuses, are refused here too); anything else is
 * the text. A number and its digits as text seed alike (the Rng takes the seed's text).
 */
export function seedOf(text: string): string | number {
  if (text === "") {
    throw new RpmlabError("E_USAGE", '--seed takes an integer or a non-empty string, got ""', {
      field: "seed",
    });
  }
  const isNumber = NUMBER.test(text) || HEX_OR_OCTAL.test(text) || NOT_A_NUMBER.test(text);
  if (!isNumber) return text;
  // Number() reads 0x and 0o as YAML does; .inf and .nan are no JavaScript number: refused below.
  const seed = NOT_A_NUMBER.test(text) ? Number.NaN : Number(text);
  if (!Number.isSafeInteger(seed)) {
    throw new RpmlabError(
      "E_USAGE",
      `--seed ${quotedValue(text)} is a number, and a number seed is a whole number from -9007199254740991 to 9007199254740991, as in a scenario file`,
      { field: "seed" },
    );
  }
  return seed === 0 ? 0 : seed; // -0 is 0
}

/** The seed's text, for the commands whose Rng takes text (the same stream as seedOf's). */
export function seedText(text: string): string {
  return String(seedOf(text));
}
