import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MQTT_SCHEMA_PATH, mqttJsonSchema } from "../../src/mqtt/json-schema.ts";
import { TOPIC_KINDS, TOPICS } from "../../src/mqtt/topics.ts";

describe("published MQTT JSON Schema (src/mqtt/schema/)", () => {
  it("is current (run `npm run docs` after changing src/mqtt/envelope.ts or the topic map)", () => {
    const committed = JSON.parse(readFileSync(MQTT_SCHEMA_PATH, "utf8")) as unknown;
    expect(committed).toEqual(mqttJsonSchema());
  });

  it("names every topic of the map with its payload definition", () => {
    const schema = mqttJsonSchema() as {
      "x-topics": Record<string, { $ref: string; retain: boolean }>;
      $defs: Record<string, unknown>;
    };
    expect(Object.keys(schema["x-topics"])).toEqual(TOPIC_KINDS.map((k) => TOPICS[k].pattern));
    for (const topic of Object.values(schema["x-topics"])) {
      expect(schema.$defs[topic.$ref.replace("#/$defs/", "")]).toBeDefined();
    }
    expect(Object.keys(schema.$defs)).toEqual(
      expect.arrayContaining(["GatewayUplink", "CellularUplink", "GatewayStatus", "Downlink"]),
    );
  });
});
