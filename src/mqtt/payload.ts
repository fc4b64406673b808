import type { z } from "zod";
import { clipped } from "../core/clip.ts";
import { RpmlabError } from "../core/errors.ts";
import { describeJsonError, utf8ByteAt } from "../core/json-error.ts";
import { firstInvalidUtf8 } from "../core/utf8.ts";
import { ENVELOPE_VERSION } from "./envelope.ts";
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

/**
 * Bytes of an MQTT payload → the typed payload of its topic: UTF-8, JSON, the version, then
 * the topic's schema. Throws E_MQTT_PAYLOAD with a reason naming the field at fault.
 */
export function parsePayload<K extends TopicKind>(kind: K, payload: Uint8Array): TopicPayloads[K] {
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
  const parsed = TOPICS[kind].schema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0]?.path.map(String).join(".");
    throw payloadError(kind, describeIssues(parsed.error.issues), first);
  }
  return parsed.data;
}

/** Replacement decoding (not fatal): each invalid sequence becomes U+FFFD. */

/**
 * The bytes to publish for a payload, checked against the topic's schema first so a sender's
 * mistake fails where it is made (E_MQTT_PAYLOAD), not as a dead letter in the service.
 */
export function encodePayload<K extends TopicKind>(kind: K, payload: TopicPayloads[K]): Buffer {
  const parsed = TOPICS[kind].schema.safeParse(payload);
  if (!parsed.success) throw payloadError(kind, describeIssues(parsed.error.issues));
  return Buffer.from(JSON.stringify(payload), "utf8");
}
