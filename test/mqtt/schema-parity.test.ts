/**
 * The published JSON Schema (src/mqtt/schema/) and the ingestion core agree: a platform team or a
 * CI pipeline validating what its gateways send with an off-the-shelf validator (ajv, formats as
 * annotations, as JSON Schema 2020-12 leaves them) gets the verdict ingestion would give — every
 * payload rpmlab's own senders publish passes, and a payload ingestion refuses for its shape is
 * refused by the schema too, by its patterns alone.
 */
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
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

const schema = JSON.parse(readFileSync(MQTT_SCHEMA_PATH, "utf8")) as { $id: string };
// strict: false — `x-topics` is an annotation (2020-12 §6.5 lets a schema carry its own);
// formats are annotations too (2020-12 §7.2), as most validators take them.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(schema);
const DEFINITION: Record<TopicKind, string> = {
  "gw/up": "GatewayUplink",
  "gw/status": "GatewayStatus",
  "gw/down": "Downlink",
  "cell/up": "CellularUplink",
};

/** The schema's verdict: null when valid, else ajv's first complaint. */
function schemaSays(kind: TopicKind, payload: unknown): string | null {
  const validate = ajv.getSchema(`${schema.$id}#/$defs/${DEFINITION[kind]}`);
  if (validate === undefined) throw new Error(`no definition for ${kind}`);
  if (validate(payload)) return null;
  const first = validate.errors?.[0];
  return `${first?.instancePath} ${first?.message}`;
}

/** Ingestion's verdict on the same payload: null when it parses, else its reason. */
function ingestionSays(kind: TopicKind, payload: unknown): string | null {
  try {
    parsePayload(kind, Buffer.from(JSON.stringify(payload)));
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

function expectSameVerdict(kind: TopicKind, payload: unknown, label: string): void {
  const schemaVerdict = schemaSays(kind, payload);
  const ingestVerdict = ingestionSays(kind, payload);
  expect(
    { valid: schemaVerdict === null, schema: schemaVerdict, ingestion: ingestVerdict },
    label,
  ).toMatchObject({ valid: ingestVerdict === null });
}

const cuff = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
const cuffUplink = uplinkMessage(cuff, "m-1", readingsOf(cuff, 1).slice(0, 2)).payload;
// biome-ignore lint/suspicious/noExplicitAny: a case may break any field, typed or not
type Draft = Record<string, any>;
/** A cuff's uplink as its gateway publishes it, to break. */
const gatewayUp = (): Draft => JSON.parse(cuffUplink.toString("utf8"));

describe("published MQTT JSON Schema and ingestion agree", () => {
  it("passes what every catalogue device's sender publishes, and the lab's status and downlinks", () => {
    for (const [i, profile] of catalogue.profiles.entries()) {
      const sender = senderFor(profile, i);
      const { payload } = uplinkMessage(sender, `m-${i}`, readingsOf(sender, 2));
      const kind = profile.connectivity === "cellular" ? "cell/up" : "gw/up";
      expect(schemaSays(kind, JSON.parse(payload.toString("utf8"))), profile.name).toBeNull();
    }
    expect(
      schemaSays("gw/status", JSON.parse(checkinPayload(17, Date.UTC(2026, 0, 1)))),
    ).toBeNull();
    expect(schemaSays("gw/status", { v: 1, online: false })).toBeNull();
    const down = [
      {
        v: 1,
        type: "time",
        now: "2026-01-01T08:00:00.000000Z",
        checkin_at: "2026-01-01T07:59:00Z",
      },
      {
        v: 1,
        type: "whitelist",
        devices: [
          {
            mac_address: "F01122334455",
            sensor_code: "25",
            sensor_id: "INH01",
            whitelist_status: "RE",
          },
        ],
      },
    ];
    for (const payload of down) expect(schemaSays("gw/down", payload)).toBeNull();
  });

  it("refuses times that are no calendar date and time, as ingestion does", () => {
    for (const sentAt of [
      "2026-02-30T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2100-02-29T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-00-10T00:00:00Z",
      "2026-01-00T00:00:00Z",
      "2026-01-01T24:00:00Z",
      "2026-01-01T23:60:00Z",
      "2026-12-31T23:59:60Z",
      "2000-02-29T00:00:00Z",
      "2024-02-29T23:59:59.999999Z",
      "0000-02-29T00:00:00Z",
    ]) {
      expectSameVerdict("gw/up", { ...gatewayUp(), sent_at: sentAt }, sentAt);
    }
  });

  it("agrees on every time of the ISO 8601 shape (property)", () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, "0")),
        two(14),
        two(32),
        two(25),
        two(61),
        two(61),
        (y, mo, d, h, mi, s) => {
          const at = `${y}-${mo}-${d}T${h}:${mi}:${s}Z`;
          const payload = gatewayUp();
          payload.readings[0].received_at = at;
          return (
            (schemaSays("gw/up", payload) === null) === (ingestionSays("gw/up", payload) === null)
          );
        },
      ),
      { numRuns: 2000, seed: 1 },
    );
  });

  it("refuses a value of more than 512 bytes (ATT) by its base64, as ingestion does", () => {
    for (const bytes of [0, 1, 2, 3, 509, 510, 511, 512, 513, 514, 515, 516, 600]) {
      const payload = gatewayUp();
      payload.readings[0].values[0].value_b64 = Buffer.alloc(bytes, 0xa5).toString("base64");
      expectSameVerdict("gw/up", payload, `${bytes} bytes`);
    }
  });

  it("agrees on the shape faults a gateway written elsewhere makes", () => {
    const cases: [string, (p: Draft) => void][] = [
      ["extra field", (p) => Object.assign(p, { extra: 1 })],
      ["v 2", (p) => Object.assign(p, { v: 2 })],
      ["sensor_code a number", (p) => Object.assign(p.readings[0], { sensor_code: 10 })],
      ["sequence 65536", (p) => Object.assign(p.readings[0], { sequence: 65536 })],
      ["sequence 1.5", (p) => Object.assign(p.readings[0], { sequence: 1.5 })],
      [
        "lower-case address",
        (p) => Object.assign(p.readings[0], { device_address: "f01122334455" }),
      ],
      ["clock_unset false", (p) => Object.assign(p.readings[0], { clock_unset: false })],
      ["no values", (p) => Object.assign(p.readings[0], { values: [] })],
      [
        "base64 with a newline",
        (p) => Object.assign(p.readings[0].values[0], { value_b64: "Wg==\n" }),
      ],
      ["base64 unpadded", (p) => Object.assign(p.readings[0].values[0], { value_b64: "Wg" })],
      ["uuid of 6 digits", (p) => Object.assign(p.readings[0].values[0], { uuid: "002A35" })],
      ["offset time", (p) => Object.assign(p, { sent_at: "2026-01-01T08:00:00+00:00" })],
      [
        "seven fraction digits",
        (p) => Object.assign(p, { sent_at: "2026-01-01T08:00:00.0000001Z" }),
      ],
    ];
    for (const [label, mutate] of cases) {
      const payload = gatewayUp();
      mutate(payload);
      expectSameVerdict("gw/up", payload, label);
    }
  });

  it("writes its patterns in the syntax every validator's regex dialect reads alike: no Unicode property escapes (Python's re, under jsonschema, refused \\p{Cc} and could not validate a check-in), no classes whose meaning differs", () => {
    const patterns: string[] = [];
    const collect = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (typeof node === "object" && node !== null) {
        for (const [key, value] of Object.entries(node)) {
          if (key === "pattern" && typeof value === "string") patterns.push(value);
          else collect(value);
        }
      }
    };
    collect(schema);
    expect(patterns.length).toBeGreaterThan(10);
    for (const pattern of patterns) {
      expect(pattern).not.toMatch(/\\[pP]\{|\(\?<[=!]|\(\?<\w/);
      // \d, \w, \s and \b mean ASCII in ECMA-262 and Unicode in Python's re: there
      // "٢٠٢٦-01-01T08:00:00Z" passed as a time, and ingestion refuses it.
      expect(pattern.replaceAll("\\\\", "")).not.toMatch(/\\[dDwWsSbB]/);
    }
  });

  it("agrees on the text a device reports about itself: control characters and lone surrogates refused, any other character taken", () => {
    const checkin = JSON.parse(checkinPayload(17, Date.UTC(2026, 0, 1)));
    for (const firmware of [
      "2.4.1",
      "v2 ☃",
      "fw 😀",
      "é",
      "a\u0000",
      "a\u001f",
      "a\u007f",
      "a\u0085",
      "a\u009f",
      "a\ud800",
      "\udfffb",
      "a\u00a0",
    ]) {
      expectSameVerdict(
        "gw/status",
        { ...checkin, firmware_version: firmware },
        JSON.stringify(firmware),
      );
    }
  });
});
