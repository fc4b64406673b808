import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ACTION_NAMES } from "../../src/scenario/actions.ts";
import { SCENARIO_SCHEMA_PATH, scenarioJsonSchema } from "../../src/scenario/json-schema.ts";

describe("published scenario JSON Schema (scenarios/rpmlab-scenario.schema.json)", () => {
  it("is current (run `npm run docs` after changing src/scenario's schema)", () => {
    const committed = JSON.parse(readFileSync(SCENARIO_SCHEMA_PATH, "utf8")) as unknown;
    expect(committed).toEqual(scenarioJsonSchema());
  });

  it("refuses unknown keys and offers every action by name", () => {
    const schema = scenarioJsonSchema() as {
      additionalProperties: boolean;
      required: string[];
      properties: {
        events: { items: { oneOf: Array<{ properties: { action: { const: string } } }> } };
      };
    };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual([
      "scenario",
      "seed",
      "clock",
      "duration",
      "accounts",
      "cohorts",
    ]);
    expect(schema.properties.events.items.oneOf.map((o) => o.properties.action.const)).toEqual(
      ACTION_NAMES,
    );
  });

  it("gives editors the runner's patterns for durations", () => {
    const schema = scenarioJsonSchema() as { properties: { duration: { pattern: string } } };
    const duration = new RegExp(schema.properties.duration.pattern);
    for (const ok of ["30d", "1.5d", "90m", " 12 h "]) expect(duration.test(ok), ok).toBe(true);
    for (const bad of ["banana", "30", "d", "5 days", "-1d"])
      expect(duration.test(bad), bad).toBe(false);
  });
});
