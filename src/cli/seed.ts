import { quotedValue } from "../core/clip.ts";
import { RpmlabError } from "../core/errors.ts";

/** A number as YAML reads an unquoted `seed:` (decimal forms): `42`, `-7`, `42.0`, `1e3`. */
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/**
 * Every `--seed` (run, demo, readings, device, gateway, controller) as a scenario file's `seed:`
 * reads it (README "Scenario files"): a number is that number, and must be a whole one from
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
  if (!NUMBER.test(text)) return text;
  const seed = Number(text);
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
