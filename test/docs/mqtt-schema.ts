/**
 * Writes the MQTT topic and payload JSON Schema (src/mqtt/schema/) from the zod schemas, in
 * Biome's JSON format so `npm run check` stays clean. Run by `npm run docs`;
 * test/mqtt/json-schema.test.ts fails when the committed file says something else.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MQTT_SCHEMA_PATH, renderMqttJsonSchema } from "../../src/mqtt/json-schema.ts";

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const biome = fileURLToPath(new URL("../../node_modules/.bin/biome", import.meta.url));
  const formatted = execFileSync(biome, ["format", `--stdin-file-path=${MQTT_SCHEMA_PATH}`], {
    input: renderMqttJsonSchema(),
    encoding: "utf8",
  });
  writeFileSync(MQTT_SCHEMA_PATH, formatted);
  process.stdout.write(`${MQTT_SCHEMA_PATH} written\n`);
}
