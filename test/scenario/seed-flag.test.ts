import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { seedOf } from "../../src/cli/seed.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { scenarioSchema } from "../../src/scenario/schema.ts";

/** What a scenario file's `seed: <text>` is: its seed, or "refused". */
function fileSeed(text: string): string | number {
  const parsed = scenarioSchema.shape.seed.safeParse(parseYaml(`seed: ${text}`).seed);
  return parsed.success ? parsed.data : "refused";
}

/** What `--seed <text>` is: its seed, or "refused" (E_USAGE naming the field). */
function flagSeed(text: string): string | number {
  try {
    return seedOf(text);
  } catch (error) {
    if (isRpmlabError(error) && error.code === "E_USAGE") return "refused";
    throw error;
  }
}

describe("--seed reads its value as a scenario file reads seed:", () => {
  it("hexadecimal and octal as YAML's core schema does: 0x2A and 0o52 are 42, -0x2A and 0X2A text", () => {
    expect(flagSeed("0x2A")).toBe(42);
    expect(flagSeed("0o52")).toBe(42);
    for (const text of [
      "0x2A",
      "0x2a",
      "0o52",
      "0X2A",
      "0O52",
      "-0x2A",
      "+0x2A",
      "0b101010",
      "0xFF_FF",
      "0x",
      "0x1FFFFFFFFFFFFF",
      "0x20000000000000",
      "052",
      "42",
      "-7",
      "42.0",
      "1e3",
      "42.5",
      ".inf",
      "-.inf",
      ".nan",
      "ward-3",
    ]) {
      expect([text, flagSeed(text)]).toEqual([text, fileSeed(text)]);
    }
  });
});
