import { TextDecoder } from "node:util";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { firstInvalidUtf8 } from "../core/utf8.ts";
import { apiError } from "./errors.ts";

/**
 * Request bodies are JSON only (spec: "All bodies are JSON"; 415 otherwise, spec 7.2). Fastify's
 * built-in text/plain parser goes; its JSON parser stays for the parsing itself (it refuses
 * __proto__ and constructor.prototype keys), wrapped so that:
 * - an empty JSON body reads as `{}`, as DRF reads it: each required field is reported missing;
 * - malformed JSON is a 400 `{"detail": "JSON parse error - …"}` (DRF's ParseError text).
 * A body with any other content type, or with none, is a 415 (errors.ts words it as DRF does).
 * Routes that read no body (route config BODY_IGNORED: the DELETEs, unlink) ignore one of any
 * type unparsed, as a DRF view that never reads request.data does: no 415, no 400.
 */
export function registerJsonOnly(app: FastifyInstance): void {
  // No body at all (no content type, no length) reads as `{}` too; a JSON `null` stays null.
  app.addHook("preValidation", async (request) => {
    const length = request.headers["content-length"];
    const bodiless = request.headers["transfer-encoding"] === undefined && (length ?? "0") === "0";
    if (request.body == null && bodiless && request.headers["content-type"] === undefined) {
      request.body = {};
    }
  });
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    if (bodyIgnored(request)) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = decodeBody(body as Buffer, request.headers["content-type"] ?? "application/json");
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    if (text.trim() === "") {
      done(null, {});
      return;
    }
    parseJson(request, text, (error, value) => {
      if (error === null) {
        done(null, value);
        return;
      }
      done(apiError.badRequest(`JSON parse error - ${describeJsonError(text)}`), undefined);
    });
  });
  // Any other content type (or a body without one): read and dropped where no body is read,
  // else the 415 Fastify gives when no parser matches.
  app.addContentTypeParser("*", (request, payload, done) => {
    if (bodyIgnored(request)) {
      payload.resume();
      done(null, undefined);
      return;
    }
    const type = request.headers["content-type"] ?? "";
    done(apiError.unsupportedMediaType(type), undefined);
  });
}

/** Route config of a route that reads no request body: one sent is ignored, unparsed. */
export const BODY_IGNORED = { bodyIgnored: true } as const;

function bodyIgnored(request: FastifyRequest): boolean {
  const config = request.routeOptions.config as { bodyIgnored?: boolean } | undefined;
  return config?.bodyIgnored === true;
}

/**
 * The body's text in the charset its content type declares (UTF-8 when it names none), as DRF
 * decodes it: a charset no decoder knows is a 415; bytes it does not decode are a 400 naming the
 * first (DRF: "JSON parse error - 'utf-8' codec can't decode byte …"), never text with U+FFFD
 * in place of what the client sent.
 */
function decodeBody(body: Buffer, contentType: string): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)?.[1] ?? "utf-8";
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    throw apiError.unsupportedMediaType(contentType);
  }
  try {
    return decoder.decode(body);
  } catch {
    const where = decoder.encoding === "utf-8" ? ` at byte ${firstInvalidUtf8(body)}` : "";
    throw apiError.badRequest(`JSON parse error - the body is not ${charset} text${where}`);
  }
}

/** The position-bearing message of JSON.parse; for valid JSON, which key the parser refused. */
function describeJsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  // Valid JSON the secure parser refused (Fastify's own message would call it invalid JSON).
  return "a __proto__ or constructor.prototype key is not accepted";
}
