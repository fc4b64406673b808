/**
 * The published JSON Schema read by Python's jsonschema, the validator a Python platform team
 * reaches for: its verdicts are ingestion's (test/mqtt/schema-parity.test.ts holds ajv to the
 * same). Python's re reads some pattern syntax otherwise than ECMA-262 (`$` before a final
 * newline, `\d` any Unicode digit, `\p{…}` refused), so the schema's patterns avoid it.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MQTT_SCHEMA_PATH } from "../../src/mqtt/json-schema.ts";
import { parsePayload } from "../../src/mqtt/payload.ts";
import type { TopicKind } from "../../src/mqtt/topics.ts";
import {
  catalogue,
  checkinPayload,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "../ingest/fixtures.ts";
import { PYTHON_JSONSCHEMA, systemToolOrSkip } from "../support/system-tool.ts";

const SUITE = "published MQTT JSON Schema in Python's jsonschema";
const python = systemToolOrSkip(SUITE, PYTHON_JSONSCHEMA);

/** Each case's validity by jsonschema's Draft 2020-12 validator, in one python3 run. */
function pythonSays(cases: readonly { definition: string; payload: unknown }[]): boolean[] {
  const script = [
    "import json, sys, jsonschema",
    "data = json.load(sys.stdin)",
    "schema = data['schema']",
    "print(json.dumps([jsonschema.Draft202012Validator({**schema, '$ref': '#/$defs/' + c['definition']}).is_valid(c['payload']) for c in data['cases']]))",
  ].join("\n");
  const input = JSON.stringify({
    schema: JSON.parse(readFileSync(MQTT_SCHEMA_PATH, "utf8")),
    cases,
  });
  const run = spawnSync(python!, ["-c", script], { input, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`python3 failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as boolean[];
}

interface Case {
  readonly label: string;
  readonly kind: TopicKind;
  readonly definition: string;
  readonly payload: unknown;
}

const DEFINITION: Record<TopicKind, string> = {
  "gw/up": "GatewayUplink",
  "gw/status": "GatewayStatus",
  "gw/down": "Downlink",
  "cell/up": "CellularUplink",
};

const of = (kind: TopicKind, list: [string, unknown][]): Case[] =>
  list.map(([label, payload]) => ({ label, kind, definition: DEFINITION[kind], payload }));

const ingests = (kind: TopicKind, payload: unknown): boolean => {
  try {
    parsePayload(kind, Buffer.from(JSON.stringify(payload)));
    return true;
  } catch {
    return false;
  }
};

if (python !== undefined) {
  describe(SUITE, () => {
    it("gives ingestion's verdict, on what senders publish and on what ingestion refuses", () => {
      const cuff = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
      const scale = senderFor(catalogue.get("Vendor Cellular Scale"), 2);
      const up = JSON.parse(
        uplinkMessage(cuff, "m-1", readingsOf(cuff, 1).slice(0, 2)).payload.toString(),
      );
      const cell = JSON.parse(
        uplinkMessage(scale, "m-2", readingsOf(scale, 2).slice(0, 1)).payload.toString(),
      );
      const checkin = JSON.parse(checkinPayload(17, Date.UTC(2026, 0, 1)));
      const reading = (change: Record<string, unknown>) => ({
        ...up,
        readings: [{ ...up.readings[0], ...change }],
      });
      const withValue = (change: Record<string, string>) => ({
        ...cell,
        readings: [{ ...cell.readings[0], values: [{ ...cell.readings[0].values[0], ...change }] }],
      });
      const cases: Case[] = [
        ...of("gw/up", [
          ["gateway uplink", up],
          ["gateway_uuid with a final newline", { ...up, gateway_uuid: `${up.gateway_uuid}\n` }],
          ["message_id with a final newline", { ...up, message_id: "m-1\n" }],
          ["sent_at with a final newline", { ...up, sent_at: `${up.sent_at}\n` }],
          ["sent_at in Arabic-Indic digits", { ...up, sent_at: "٢٠٢٦-01-01T08:00:00Z" }],
          ["sent_at on 30 February", { ...up, sent_at: "2026-02-30T08:00:00Z" }],
          ["sensor_code with a final newline", reading({ sensor_code: "10\n" })],
          ["device_address with a final newline", reading({ device_address: "F01122334401\n" })],
          ["sensor_id with a final newline", reading({ sensor_id: "SN01\n" })],
        ]),
        ...of("gw/status", [
          ["check-in", checkin],
          ["firmware with a final newline", { ...checkin, firmware_version: "2.4.1\n" }],
          ["firmware with an emoji", { ...checkin, firmware_version: "2.4.1 😀" }],
          [
            "checkin_at with a final newline",
            { ...checkin, checkin_at: `${checkin.checkin_at}\n` },
          ],
        ]),
        ...of("cell/up", [
          ["cellular uplink", cell],
          ["imei with a final newline", { ...cell, imei: `${cell.imei}\n` }],
          ["imei in Arabic-Indic digits", { ...cell, imei: "٣٥٦٩٣٨٠٣٥٦٤٣٨٠٢" }],
          [
            "value_b64 with a final newline",
            withValue({ value_b64: `${cell.readings[0].values[0].value_b64}\n` }),
          ],
          ["uuid with a final newline", withValue({ uuid: "2A9D\n" })],
        ]),
      ];
      const verdicts = pythonSays(cases);
      const disagreements = cases.flatMap((c, i) =>
        verdicts[i] === ingests(c.kind, c.payload)
          ? []
          : [`${c.label}: jsonschema ${verdicts[i] ? "passes" : "refuses"} it`],
      );
      expect(disagreements).toEqual([]);
    });
  });
}
