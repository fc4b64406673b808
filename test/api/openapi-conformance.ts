import { isDeepStrictEqual } from "node:util";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { FastifyInstance } from "fastify";

/**
 * Checks every answer an app gives against its own OpenAPI document (/docs/json), as a client
 * generated from the document would read it: the status is one the operation documents, the
 * body has the documented content type and validates against the documented schema, and the
 * serializer (which writes only what the schema names) dropped or changed nothing the route
 * answered — a field the schema leaves out is a field a client never sees.
 *
 * Answers of no documented operation (unknown paths, the 301 to the slashed path, 405, the
 * HEAD of a GET, the explorer) are the description's global decisions and not checked here.
 */
export interface Conformance {
  /** Every mismatch seen so far, one line each. */
  violations(): Promise<string[]>;
  /** How many answers of documented operations were checked. */
  checked(): number;
}

interface Seen {
  readonly operation: string;
  readonly path: string;
  readonly method: string;
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly payload: unknown;
  readonly hasPayload: boolean;
}

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

export function checkAgainstDocument(app: FastifyInstance): Conformance {
  const seen: Seen[] = [];
  const payloads = new WeakMap<object, unknown>();
  app.addHook("preSerialization", async (request, _reply, payload) => {
    // As JSON.stringify would write it, before the schema's serializer writes only what it names.
    try {
      payloads.set(request, JSON.parse(JSON.stringify(payload)) as unknown);
    } catch {
      // Not JSON-writable (a BigInt): the serializer's own output is all there is to check.
    }
    return payload;
  });
  app.addHook("onSend", async (request, reply, payload) => {
    const url = request.routeOptions.url;
    if (url === undefined || url.startsWith("/docs") || request.method === "HEAD") return payload;
    const path = url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
    seen.push({
      operation: `${request.method} ${path}`,
      path,
      method: request.method.toLowerCase(),
      status: reply.statusCode,
      contentType: String(reply.getHeader("content-type") ?? ""),
      body: typeof payload === "string" ? payload : "",
      payload: payloads.get(request),
      hasPayload: payloads.has(request),
    });
    return payload;
  });
  let doc: { paths: Record<string, Record<string, Operation>> } | undefined;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // ISO 8601 as the document's date-times promise (RFC 3339 §5.6).
  ajv.addFormat("date-time", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i);
  const validators = new Map<string, ValidateFunction>();
  return {
    checked: () => seen.length,
    violations: async () => {
      // An app that answered nothing may never have loaded its plugins (app.swagger among them).
      if (seen.length === 0) return [];
      // The document /docs/json serves, read off the app itself: tests may have closed it.
      doc ??= app.swagger() as unknown as typeof doc;
      const out: string[] = [];
      for (const s of seen) {
        const op = doc!.paths[s.path]?.[s.method];
        if (op === undefined) continue;
        const at = `${s.operation} ${s.status}`;
        const response = op.responses?.[String(s.status)] ?? op.responses?.default;
        if (response === undefined) {
          out.push(`${at}: status not documented (${s.body.slice(0, 120)})`);
          continue;
        }
        if (response.content === undefined) {
          if (s.body !== "")
            out.push(`${at}: documented without a body, answered ${s.body.slice(0, 120)}`);
          continue;
        }
        const type = s.contentType.split(";")[0]!.trim();
        const media = response.content[type];
        if (media === undefined) {
          out.push(`${at}: content type ${type} not documented`);
          continue;
        }
        if (type !== "application/json" || media.schema === undefined) continue;
        let validate = validators.get(at);
        if (validate === undefined) {
          validate = ajv.compile(media.schema as object);
          validators.set(at, validate);
        }
        const body = JSON.parse(s.body) as unknown;
        if (!validate(body)) {
          const errors = (validate.errors ?? [])
            .slice(0, 3)
            .map((e) => `${e.instancePath} ${e.message}`)
            .join("; ");
          out.push(`${at}: ${errors} in ${s.body.slice(0, 200)}`);
        }
        if (s.hasPayload && !isDeepStrictEqual(s.payload, body)) {
          out.push(
            `${at}: the serializer changed the route's answer ${JSON.stringify(s.payload).slice(0, 300)} into ${s.body.slice(0, 300)}`,
          );
        }
      }
      return [...new Set(out)];
    },
  };
}
