/**
 * Writes the scenario JSON Schema (scenarios/rpmlab-scenario.schema.json) from the zod schema,
 * in Biome's JSON format so `npm run check` stays clean. Run by `npm run docs`;
 * test/scenario/json-schema.test.ts fails when the committed file says something else.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderScenarioJsonSchema, SCENARIO_SCHEMA_PATH } from "../../src/scenario/json-schema.ts";

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const biome = fileURLToPath(new URL("../../node_modules/.bin/biome", import.meta.url));
  const formatted = execFileSync(biome, ["format", `--stdin-file-path=${SCENARIO_SCHEMA_PATH}`], {
    input: renderScenarioJsonSchema(),
    encoding: "utf8",
  });
  writeFileSync(SCENARIO_SCHEMA_PATH, formatted);
  process.stdout.write(`${SCENARIO_SCHEMA_PATH} written\n`);
}
