import { TextDecoder } from "node:util";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { describeJsonError, utf8ByteAt } from "../core/json-error.ts";
import { firstInvalidUtf8, firstUndecodable } from "../core/utf8.ts";
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
    let decoded: DecodedBody;
    try {
      decoded = decodeBody(body as Buffer, request.headers["content-type"] ?? "application/json");
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    const { text } = decoded;
    if (text.trim() === "") {
      done(null, {});
      return;
    }
    parseJson(request, exactIntegers(text), (error, value) => {
      if (error === null) {
        done(null, value);
        return;
      }
      const why = whyNotJson(body as Buffer, decoded);
      done(apiError.badRequest(`JSON parse error - ${why}`), undefined);
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

/** Any integer a double cannot hold exactly has at least 16 digits (2^53 has 16). */
const LONG_DIGITS = /\d{16}/;
const INTEGER_TOKEN = /^-?(?:0|[1-9]\d*)$/;

/**
 * The JSON text with every integer past Number.MAX_SAFE_INTEGER turned into a string of its
 * digits. Python's json (DRF) reads integers exactly, so a CharField given 12345678901234567890
 * (a 64-bit id sent as a number) keeps those digits and an IntegerField compares the exact value;
 * JSON.parse rounds it to 12345678901234567000, silently storing another id (two patients'
 * ids collapsing into one). Fields read numbers given as text as DRF does (charField,
 * integerField), so the string keeps their answers. Only number tokens outside strings change;
 * text that is not JSON stays not JSON (its error is described from the original text).
 */
function exactIntegers(text: string): string {
  // A body that is a bare number stays one: its 400 names it an int, as DRF's does.
  if (!LONG_DIGITS.test(text) || !/^\s*[[{]/.test(text)) return text;
  let out = "";
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      // Skip the string, escapes included.
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      i++;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      let end = i + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++;
      const token = text.slice(i, end);
      if (INTEGER_TOKEN.test(token) && !Number.isSafeInteger(Number(token))) {
        out += `${text.slice(copied, i)}"${token}"`;
        copied = end;
      }
      i = end;
    } else {
      i++;
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
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
function decodeBody(body: Buffer, contentType: string): DecodedBody {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)?.[1] ?? "utf-8";
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    throw apiError.unsupportedMediaType(contentType);
  }
  try {
    return { text: decoder.decode(body), encoding: decoder.encoding };
  } catch {
    const at =
      decoder.encoding === "utf-8"
        ? firstInvalidUtf8(body)
        : firstUndecodable(body, decoder.encoding);
    throw apiError.badRequest(`JSON parse error - the body is not ${charset} text at byte ${at}`);
  }
}

interface DecodedBody {
  readonly text: string;
  /** The decoder's name for the charset, e.g. "utf-8", "windows-1252", "utf-16le". */
  readonly encoding: string;
}

/**
 * What is wrong with the body and where: in UTF-8 at which byte; in another charset at which
 * character (a byte offset would need that charset's encoder). JSON.parse's own message gives
 * no position for some errors ("Unexpected end of JSON input") and counts UTF-16 code units for
 * the others. Valid JSON that the secure parser refused: the key it refused.
 */
function whyNotJson(body: Buffer, { text, encoding }: DecodedBody): string {
  const where =
    encoding === "utf-8"
      ? utf8ByteAt(body, text)
      : (index: number) => `character ${[...text.slice(0, index)].length}`;
  const problem = describeJsonError(text, where);
  if (problem !== null) return problem;
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  // Valid JSON the secure parser refused (Fastify's own message would call it invalid JSON).
  return "a __proto__ or constructor.prototype key is not accepted";
}
