import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ENVELOPE_VERSION } from "./envelope.ts";
import { TOPIC_KINDS, TOPIC_QOS, TOPICS } from "./topics.ts";

/**
 * The topic and payload format as a versioned JSON Schema (2020-12), generated from the zod
 * schemas of envelope.ts, so gateways written elsewhere can validate what they send. The file
 * is committed; `npm run docs` rewrites it and test/mqtt/json-schema.test.ts keeps it current.
 */
export const MQTT_SCHEMA_PATH = fileURLToPath(
  new URL(`./schema/rpmlab-mqtt-v${ENVELOPE_VERSION}.schema.json`, import.meta.url),
);

export function mqttJsonSchema(): Record<string, unknown> {
  const payloads = z.union(TOPIC_KINDS.map((kind) => TOPICS[kind].schema));
  const generated = z.toJSONSchema(payloads, { target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  const { $schema, ...body } = generated;
  return {
    $schema,
    $id: `rpmlab-mqtt-v${ENVELOPE_VERSION}`,
    title: `rpmlab MQTT payloads, version ${ENVELOPE_VERSION}`,
    description:
      "Payloads of the rpmlab MQTT topics. Every topic is published with QoS 1 on persistent sessions; the payload is UTF-8 JSON. x-topics maps each topic pattern to its payload definition.",
    "x-topics": Object.fromEntries(
      TOPIC_KINDS.map((kind) => {
        const spec = TOPICS[kind];
        const id = (spec.schema.meta() as { id?: string } | undefined)?.id;
        return [
          spec.pattern,
          {
            $ref: `#/$defs/${id}`,
            sender: spec.sender,
            qos: TOPIC_QOS,
            retain: spec.retain,
            description: spec.description,
          },
        ];
      }),
    ),
    ...body,
  };
}

/** The file's text: stable key order, two-space indent, final newline. */
export function renderMqttJsonSchema(): string {
  return `${JSON.stringify(mqttJsonSchema(), null, 2)}\n`;
}
