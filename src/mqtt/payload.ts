import type { z } from "zod";
import { clipped } from "../core/clip.ts";
import { RpmlabError } from "../core/errors.ts";
import { describeJsonError, utf8ByteAt } from "../core/json-error.ts";
import { firstInvalidUtf8 } from "../core/utf8.ts";
import { cellularReadingSchema, ENVELOPE_VERSION, gatewayReadingSchema } from "./envelope.ts";
import { TOPICS, type TopicKind, type TopicPayloads } from "./topics.ts";

/** Larger payloads are refused before parsing (256 readings of large values fit easily). */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;
/** Issues named in a reason; the rest are counted. */
const SHOWN_ISSUES = 3;
const utf8 = new TextDecoder("utf-8", { fatal: true });

function payloadError(kind: TopicKind, why: string, field?: string): RpmlabError {
  return new RpmlabError("E_MQTT_PAYLOAD", `${TOPICS[kind].pattern}: ${why}`, {
    field: field ?? "payload",
  });
}

/**
 * A value as a reason quotes it: scalars as written (clipped), containers by their kind only.
 * Never JSON.stringify of the value itself: a `v` nested 200,000 arrays deep overflows its
 * recursion, which would leave a reason naming a RangeError instead of the field.
 */
function quoted(value: unknown): string {
  if (value === undefined) return "missing";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return "an object";
  return clipped(typeof value === "string" ? JSON.stringify(value) : String(value));
}

/** Why UTF-8 text is not JSON: what is wrong, at which byte, and the character there. */
function notJson(payload: Uint8Array, text: string): string {
  // JSON.parse refused it; a parser that finds nothing wrong has nothing better to say.
  const problem = describeJsonError(text, utf8ByteAt(payload, text));
  return problem === null ? "not JSON" : `not JSON: ${problem}`;
}

/**
 * Control characters and unpaired surrogates as \uXXXX. zod quotes an unknown key as sent:
 * a key of a lone surrogate made a reason each store keeps changed, and differently (SQLite
 * three U+FFFD, PostgreSQL one), so the same dead letter read back otherwise on each.
 */
function escaped(text: string): string {
  return text.replace(
    /[\p{Cc}\p{Cs}]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** "readings.0.values.1.value_b64: Invalid base64-encoded string; …" */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, SHOWN_ISSUES).map((issue) => {
    const path = issue.path.map(String).join(".");
    return clipped(escaped(path === "" ? issue.message : `${path}: ${issue.message}`));
  });
  const more = issues.length - shown.length;
  return more > 0 ? `${shown.join("; ")} (and ${more} more)` : shown.join("; ");
}

/** UTF-8 JSON object of the lab's version, or E_MQTT_PAYLOAD saying what it is not. */
function jsonObjectOf(kind: TopicKind, payload: Uint8Array): Record<string, unknown> {
  if (payload.byteLength > MAX_PAYLOAD_BYTES) {
    throw payloadError(kind, `${payload.byteLength} bytes, more than ${MAX_PAYLOAD_BYTES}`);
  }
  let text: string;
  try {
    text = utf8.decode(payload);
  } catch {
    throw payloadError(
      kind,
      `not UTF-8 text: byte ${firstInvalidUtf8(payload)} starts no valid character`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw payloadError(kind, notJson(payload, text));
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw payloadError(kind, "not a JSON object");
  }
  const v = (json as { v?: unknown }).v;
  if (v !== ENVELOPE_VERSION) {
    throw payloadError(kind, `v is ${quoted(v)}; this lab speaks version ${ENVELOPE_VERSION}`, "v");
  }
  return json as Record<string, unknown>;
}

function schemaError(kind: TopicKind, issues: readonly z.core.$ZodIssue[]): RpmlabError {
  return payloadError(kind, describeIssues(issues), issues[0]?.path.map(String).join("."));
}

/**
 * Bytes of an MQTT payload → the typed payload of its topic: UTF-8, JSON, the version, then
 * the topic's schema. Throws E_MQTT_PAYLOAD with a reason naming the field at fault.
 */
export function parsePayload<K extends TopicKind>(kind: K, payload: Uint8Array): TopicPayloads[K] {
  const parsed = TOPICS[kind].schema.safeParse(jsonObjectOf(kind, payload));
  if (!parsed.success) throw schemaError(kind, parsed.error.issues);
  return parsed.data as TopicPayloads[K];
}

/** A reading of an uplink its schema refused on its own: its place in `readings`, and why. */
export interface RefusedReading {
  readonly index: number;
  readonly reason: string;
}

type UplinkKind = "gw/up" | "cell/up";

/**
 * An uplink's payload, its readings checked one by one: when the schema's only complaints are
 * about some of the readings, the others are kept (README "MQTT uplink": the good readings of
 * an envelope are stored), `positions` giving each kept reading's index in the payload, and
 * each refused one is named by index with the field at fault. Anything wrong outside the
 * readings, or in every one of them, refuses the message as parsePayload does.
 */
export function parseUplinkPayload<K extends UplinkKind>(
  kind: K,
  payload: Uint8Array,
): { payload: TopicPayloads[K]; positions: number[]; refused: RefusedReading[] } {
  const json = jsonObjectOf(kind, payload);
  const schema = TOPICS[kind].schema;
  const parsed = schema.safeParse(json);
  if (parsed.success) {
    const data = parsed.data as TopicPayloads[K];
    return { payload: data, positions: data.readings.map((_, i) => i), refused: [] };
  }
  const readings = json.readings;
  const inReadings = parsed.error.issues.every(
    (issue) => issue.path[0] === "readings" && typeof issue.path[1] === "number",
  );
  if (Array.isArray(readings) && inReadings) {
    const readingSchema = kind === "gw/up" ? gatewayReadingSchema : cellularReadingSchema;
    const kept: unknown[] = [];
    const positions: number[] = [];
    const refused: RefusedReading[] = [];
    for (const [index, reading] of readings.entries()) {
      const one = readingSchema.safeParse(reading);
      if (one.success) {
        kept.push(reading);
        positions.push(index);
      } else {
        refused.push({ index, reason: `E_MQTT_PAYLOAD: ${describeIssues(one.error.issues)}` });
      }
    }
    const rest = kept.length === 0 ? undefined : schema.safeParse({ ...json, readings: kept });
    if (rest?.success === true) {
      return { payload: rest.data as TopicPayloads[K], positions, refused };
    }
  }
  throw schemaError(kind, parsed.error.issues);
}

/**
 * The bytes to publish for a payload, checked against the topic's schema first so a sender's
 * mistake fails where it is made (E_MQTT_PAYLOAD), not as a dead letter in the service.
 */
export function encodePayload<K extends TopicKind>(kind: K, payload: TopicPayloads[K]): Buffer {
  const parsed = TOPICS[kind].schema.safeParse(payload);
  if (!parsed.success) throw payloadError(kind, describeIssues(parsed.error.issues));
  return Buffer.from(JSON.stringify(payload), "utf8");
}
