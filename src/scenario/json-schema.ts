import { fileURLToPath } from "node:url";
import { z } from "zod";
import { scenarioSchema } from "./schema.ts";

/**
 * The scenario format as a JSON Schema (2020-12) for editors, generated from schema.ts: each
 * scenario file names it on its first line (`# yaml-language-server: $schema=…`), so YAML
 * editors complete keys and flag mistakes while typing. It describes the input side (defaults
 * optional); the rules across fields are checked by `rpmlab scenario validate`. The file is
 * committed; `npm run docs` rewrites it and test/scenario/json-schema.test.ts keeps it current.
 */
export const SCENARIO_SCHEMA_PATH = fileURLToPath(
  new URL("../../scenarios/rpmlab-scenario.schema.json", import.meta.url),
);

export function scenarioJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(scenarioSchema, {
    target: "draft-2020-12",
    io: "input",
  }) as Record<string, unknown>;
  const { $schema, ...body } = generated;
  return { $schema, $id: "rpmlab-scenario", ...body };
}

/** The file's text: stable key order, two-space indent, final newline. */
export function renderScenarioJsonSchema(): string {
  return `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`;
}
