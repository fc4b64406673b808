import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import { formatRateLimit } from "../config/rate-limit.ts";
import { DETAIL_SCHEMA, describe, type JsonSchema, SERVER_ERROR_SCHEMA } from "./json-schema.ts";
import type { ApiConfig } from "./types.ts";

/** The explorer (swagger-ui) and the document, at /docs and /docs/json. */
export const DOCS_PREFIX = "/docs";

/**
 * OpenAPI 3.1 generated from the route schemas (issue: "served with an explorer at /docs").
 * Request schemas are zod (converted by fastify-type-provider-zod); response schemas are
 * already JSON Schema (json-schema.ts) and pass through. The description carries rpmlab's
 * decisions where the spec is silent; route descriptions carry the per-route ones.
 */
export function registerOpenApi(app: FastifyInstance, config: ApiConfig): void {
  // On the root instance (swagger is not encapsulated), before the routes, so it sees them all.
  app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "rpmlab — HWI API", version: "v1", description: description(config) },
      servers: config.baseUrl === undefined ? [] : [{ url: config.baseUrl }],
      tags: [
        { name: "hwi-patients", description: "Patients (spec 2.1, 4.1)" },
        {
          name: "hwi-devices",
          description:
            "Devices, their properties, device types, hardware uuid logs (spec 2.4, 2.8, 4.3)",
        },
        {
          name: "hwi-gateways",
          description: "Gateways, gateway info, unlink (spec 2.2, 2.3, 4.2)",
        },
        { name: "hwi-replacements", description: "Replacement orders (spec 4.3)" },
        { name: "measurements", description: "Measurement queries (spec 2.5, 4.4, 8)" },
        { name: "webhooks", description: "The webhook registry (spec 6; wire-formats)" },
        {
          name: "asr",
          description:
            "ASR supplies (spec 2.7, 4.5): supply types, supply requests, glucometer supplies; the account's ASR module must be enabled",
        },
        {
          name: "lab",
          description:
            "Lab admin API (the vendor's dashboard): accounts and keys, the webhook delivery log, resends and test sends",
        },
      ],
      components: {
        securitySchemes: {
          ApiKey: {
            type: "apiKey",
            in: "header",
            name: "Authorization",
            description: 'The header value is "Api-Key <key>"; the scheme is case-sensitive.',
          },
          AdminToken: { type: "http", scheme: "bearer", description: "The lab admin token." },
        },
      },
    },
    transform: transformRoute as never,
    transformObject: (document) =>
      withOptionalBodies((document as { openapiObject: OpenApiPaths }).openapiObject),
  });
  app.register(swaggerUi, { routePrefix: DOCS_PREFIX });
}

interface TransformInput {
  schema: Record<string, unknown> | undefined;
  url: string;
  route: { readonly method: string | readonly string[] };
  openapiObject: unknown;
}

function transformRoute(input: TransformInput): { schema: unknown; url: string } {
  if (input.schema === undefined) return { schema: input.schema, url: input.url };
  const { response, body, ...rest } = input.schema;
  const method = [input.route.method].flat()[0]!;
  // A body that is already JSON Schema (json-schema.ts documentedBody) passes through as is.
  const zodBody = isZod(body);
  const zodPart = jsonSchemaTransform({
    ...input,
    schema: zodBody ? { ...rest, body } : rest,
  } as never) as { schema: Record<string, unknown>; url: string };
  const schema: Record<string, unknown> = { ...zodPart.schema };
  if (schema.hide !== true) {
    schema.params = withPathParams(schema.params as JsonSchema | undefined, input.url);
    schema.operationId ??= operationIdOf(method, input.url);
    if (response !== undefined) {
      const config = (input.route as { config?: { bodyIgnored?: boolean } }).config;
      const takesBody = body !== undefined || BODY_METHODS.has(method);
      const readsBody = takesBody && config?.bodyIgnored !== true;
      schema.response = withHeaders({
        ...ANY_ROUTE_ERRORS,
        // A route that ignores its body still has Fastify read a JSON one, up to the limit.
        ...(takesBody ? { 413: BODY_ERRORS[413]! } : {}),
        ...(readsBody ? BODY_ERRORS : {}),
        ...(response as Responses),
      });
    }
    if (body !== undefined && !zodBody) schema.body = body;
  }
  return { schema, url: zodPart.url };
}

type Responses = Record<string, JsonSchema>;

interface OpenApiPaths {
  readonly paths?: Record<
    string,
    Record<string, { requestBody?: { required?: boolean; content: Record<string, unknown> } }>
  >;
}

/**
 * @fastify/swagger marks every request body required; here an empty body reads as `{}`
 * (content-types.ts, as DRF reads it), so a body whose schema requires no field may be left out
 * (POST …/keys/ without a name): a generated client must not insist on one.
 */
function withOptionalBodies<T extends OpenApiPaths>(doc: T): T {
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const { requestBody } of Object.values(operations)) {
      if (requestBody === undefined) continue;
      const schemas = Object.values(requestBody.content) as { schema?: JsonSchema }[];
      const emptyObjectFits = schemas.every(
        ({ schema }) =>
          schema?.type === "object" &&
          ((schema.required as unknown[] | undefined) ?? []).length === 0,
      );
      if (emptyObjectFits) requestBody.required = false;
    }
  }
  return doc;
}

/**
 * The response headers a client reads (@fastify/swagger documents a response schema's `headers`):
 * Retry-After on a 429 (rate-limit.ts), X-Request-Id on a 500 (spec 7.3: capture it for
 * support). Here, not in the route schemas, which also serialize the bodies.
 */
const HEADERS: Record<string, Record<string, JsonSchema>> = {
  429: {
    "Retry-After": {
      type: "string",
      description: "Seconds to wait before the key may call again (RFC 9110 §10.2.3).",
    },
  },
  500: {
    "X-Request-Id": {
      type: "string",
      description: "The request's id, also in the body's request_id and the server log.",
    },
  },
};

function withHeaders(responses: Responses): Responses {
  const out: Responses = { ...responses };
  for (const [status, headers] of Object.entries(HEADERS)) {
    const schema = out[status];
    if (schema !== undefined) out[status] = { ...schema, headers };
  }
  return out;
}

/**
 * What any route may answer besides its own: a NUL (%00) in the path or query is refused before
 * the route (app.ts scopePlugin), and any route may fail (errors.ts). A route's own 400 or 500
 * schema, when it has one, is kept.
 */
const ANY_ROUTE_ERRORS: Record<number, JsonSchema> = {
  400: describe(DETAIL_SCHEMA, "A NUL character (%00) in the path or query."),
  500: SERVER_ERROR_SCHEMA,
};

/**
 * The methods whose body is parsed (content-types.ts) unless the route ignores it (BODY_IGNORED):
 * a route that declares no body still refuses one that is not JSON (415) or too large (413), and
 * answers malformed JSON with 400 (the lab's replay, resend, test send and DELETEs).
 */
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** What any route that reads a body may answer besides its own (content-types.ts, app.ts). */
const BODY_ERRORS: Record<number, JsonSchema> = {
  400: describe(
    DETAIL_SCHEMA,
    'A body that is not valid JSON ({"detail": "JSON parse error - …"}), or a NUL character (%00) in the path or query.',
  ),
  413: describe(DETAIL_SCHEMA, "A body over 1 MiB."),
  415: describe(DETAIL_SCHEMA, "A body that is not JSON (spec 7.2)."),
};

/**
 * A stable, unique operationId from the method and path, for generated clients' method names:
 * `GET /clients/{clientDomain}/hwi/hwi-patients/{externalId}/` is `getHwiHwiPatientsByExternalId`
 * (the client-domain prefix every HWI and ASR path shares is left out).
 */
function operationIdOf(method: string, url: string): string {
  const words = url
    .replace(/^\/clients\/:clientDomain/, "")
    .split("/")
    .filter((part) => part !== "")
    .map((part) => (part.startsWith(":") ? `by-${part.slice(1)}` : part))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter((word) => word !== "");
  const camel = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return `${method.toLowerCase()}${camel}`;
}

function isZod(schema: unknown): boolean {
  return typeof (schema as { safeParse?: unknown } | undefined)?.safeParse === "function";
}

/** Declares the path parameters a scope prefix adds (e.g. clientDomain) that the route omits. */
function withPathParams(params: JsonSchema | undefined, url: string): JsonSchema | undefined {
  const names = [...url.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
  if (names.length === 0) return params;
  const properties = { ...((params?.properties as Record<string, unknown>) ?? {}) };
  const required = new Set((params?.required as string[] | undefined) ?? []);
  for (const name of names) {
    properties[name] ??= { type: "string", description: PARAM_DESCRIPTIONS[name] ?? name };
    required.add(name);
  }
  return { ...(params ?? {}), type: "object", properties, required: [...required] };
}

const PARAM_DESCRIPTIONS: Record<string, string> = {
  clientDomain: "The account's client domain (spec 5.3); matched ignoring case.",
};

function description(config: ApiConfig): string {
  return [
    "The vendor's HWI interface as rpmlab emulates it. HWI paths are under",
    "`/clients/{clientDomain}/hwi/`, and the spec 4.4 measurement paths also under `/api/v2/hwi/`",
    "(the key's own account). ASR routes: supply-types, supply-requests, glucometer_supplies (spec",
    "4.5), under `/clients/{clientDomain}/asr/`; each answers 403 while the account's ASR module is",
    "off.",
    "",
    "Decisions where the specification is silent:",
    "",
    "- **Auth**: `Authorization: Api-Key <key>`, scheme case-sensitive. 401 for a missing header, another scheme or spelling, or an unknown, malformed or revoked key. 403 for a valid key on another client domain (or one that does not exist) or of another environment: an account is one environment; keys carry it (`rpm_dev_…`, `rpm_prod_…`); a team uses one client domain per environment.",
    "- **HEAD**: every GET path answers HEAD too, with the status and headers its GET would have and no body (RFC 9110 §9.3.2); those are not listed path by path. `HEAD /lab/v1/events/` is listed: it answers the stream's headers and ends, opening no stream. `unlink-gateway/{id}/` refuses HEAD (405), since its GET unlinks.",
    "- **Trailing slash**: a known path without its slash answers 301 to the slashed URL (query kept), before authentication.",
    '- **Errors**: `{"detail": "…"}`; 400 keyed by field, Django REST framework style (nested fields nest, whole-body problems under `non_field_errors`); 405 with Allow; 413 for a body over 1 MiB; 414 for a path segment over 1000 characters; 415 for a body that is not JSON; 400 for a NUL (`%00`) in the path or query, on every route; 500 with a `request_id` (also in the X-Request-Id header and the server log).',
    '- **Duplicate external_id** on POST hwi-patients: 400 `{"external_id": ["patient with this external id already exists."]}`, as a DRF unique field answers; the lookup ignores case.',
    "- **Pagination**: page_size default 100, clamped to 1000; `page` a positive integer or `last` (400 keyed `page` otherwise); a page past the end 404 `Invalid page.`; next/previous absolute. Without `page` lists are flat arrays of at most 1000 items; hwi-patients and hwi-gateways always answer the envelope.",
    "- **Measurements** without `page`: no time bound → the last 30 days; both bounds of timestamp or created at most 30 days apart → every match; otherwise the first 1000 (oldest first, by timestamp then id). v2 device-measurements takes `hwi_device_id`. The patient-measurements endpoint (spec 4.4's hwi-patient-measurements) answers at `/api/v2/hwi/patient-measurements/` and `{hwi}/hwi-patient-measurements/` alike. patients/{id}/measurements and `patient_id` match the external_id exactly.",
    "- **Not found** answers Django's `No <Model> matches the given query.` (Patient, Device, Gateway, Webhook, …).",
    "- **Devices**: unknown gateway ids are accepted (201, status `Unknown Gateway ID`); PUT changes only the nested patient; hwi-devices has no PATCH or DELETE (405). Properties live at hwi-devices/{id}/properties/ (GET, POST/PUT `{key, value}`) and properties/{key}/ (GET, DELETE). unlink-gateway/{id}/ takes GET and POST, a gateway id, hwi_device_id or IMEI, and says which it unlinked.",
    `- **Rate limit** per key: ${formatRateLimit(config.rateLimit ?? null)} here (the real service: 1/s); 429 with Retry-After.`,
    '- **Webhooks** (spec 6): every POST carries `X-Rpmlab-Delivery` (the same on every attempt), `X-Rpmlab-Event`, `X-Rpmlab-Attempt`, the webhook\'s `auth_header: auth_key`, and with a `signing_secret` (rpmlab\'s addition) `X-Rpmlab-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. Measurement deliveries are retried with exponential backoff for 24 hours; the other kinds are not (spec 6.1). `enabled_by_default` and `measurement_webhook_id` route measurements (spec 6.3). The README\'s "Webhooks" section has the payloads, the retry schedule and a signature check.',
  ].join("\n");
}
