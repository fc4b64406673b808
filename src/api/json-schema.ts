import { z } from "zod";

/** A JSON Schema object, as Fastify and @fastify/swagger take it. */
export type JsonSchema = { [key: string]: unknown };

/**
 * Response schemas are declared in zod (with the request schemas, one declaration each) and
 * handed to Fastify as JSON Schema, so Fastify serializes replies with fast-json-stringify
 * (compiled per route) rather than validating and JSON.stringify-ing every reply: measurement
 * pages are the API's hot path. The same JSON Schema goes into the OpenAPI document.
 *
 * Nullable fields come out of zod as `anyOf: [X, {type: "null"}]`; they are folded to
 * `type: [X, "null"]`, which fast-json-stringify serializes directly (an anyOf makes it
 * validate each value to choose a branch).
 */
export function toJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: "draft-07",
    io: "output",
    unrepresentable: "any",
  }) as JsonSchema;
  delete json.$schema;
  return foldNullable(json) as JsonSchema;
}

function foldNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(foldNullable);
  if (node === null || typeof node !== "object") return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) out[key] = foldNullable(value);
  const anyOf = out.anyOf;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return out;
  const isNull = (s: JsonSchema) => s.type === "null" && Object.keys(s).length === 1;
  const [a, b] = anyOf as JsonSchema[];
  const other = isNull(a!) ? b! : isNull(b!) ? a! : undefined;
  if (other === undefined || typeof other.type !== "string") return out;
  const { anyOf: _, ...rest } = out;
  const folded: JsonSchema = { ...rest, ...other, type: [other.type, "null"] };
  if (Array.isArray(other.enum)) folded.enum = [...other.enum, null];
  return folded;
}

/**
 * The OpenAPI description of a body that a service validates itself, field by field, because
 * its rules depend on other fields or on the store (device activation, device update,
 * replacements, properties: src/fulfilment). Being JSON Schema rather than zod, Fastify does not
 * validate it (validation.ts): the service's DRF-style 400 is the only answer to a bad body.
 */
export function documentedBody(schema: z.ZodType, description: string): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  delete json.$schema;
  return { ...json, description };
}

/** An ISO 8601 timestamp as the service renders them (src/core/time.ts toIsoMicros). */
export const iso = () =>
  z.string().meta({ format: "date-time", description: "ISO 8601 UTC with microseconds and Z." });

/** `{"detail": "…"}`: every general error (spec 7.1). */
export const DETAIL_SCHEMA: JsonSchema = {
  type: "object",
  description: 'General error: `{"detail": "…"}`.',
  properties: { detail: { type: "string" } },
  required: ["detail"],
};

/** 400 keyed by field, DRF style; nested fields nest. */
export const FIELD_ERRORS_SCHEMA: JsonSchema = {
  type: "object",
  description:
    'Validation error keyed by field, Django REST framework style: `{"external_id": ["This field is required."]}`; nested objects nest (`{"patient": {"external_id": [...]}}`); problems with the whole body under `non_field_errors`.',
  additionalProperties: true,
};

export const SERVER_ERROR_SCHEMA: JsonSchema = {
  type: "object",
  description:
    "Server error: the request_id is also in the server log and the X-Request-Id header (spec 7.3: capture it for support).",
  properties: { detail: { type: "string" }, request_id: { type: "string" } },
  required: ["detail", "request_id"],
};

/** Error responses every authenticated client route can give (spec 7). */
export function clientErrorResponses(extra: Record<number, JsonSchema> = {}) {
  return {
    401: describe(DETAIL_SCHEMA, "Missing, malformed, unknown or revoked API key."),
    403: describe(
      DETAIL_SCHEMA,
      "Key of another client domain or environment, or module (ASR) not enabled.",
    ),
    429: describe(DETAIL_SCHEMA, "Rate limit of the key reached; see Retry-After."),
    500: SERVER_ERROR_SCHEMA,
    ...extra,
  };
}

export function describe(schema: JsonSchema, description: string): JsonSchema {
  return { ...schema, description };
}
