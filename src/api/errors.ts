import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ErrorCode, isRpmlabError, RpmlabError } from "../core/errors.ts";
import { type FieldErrors, validationError } from "../core/field-errors.ts";

/**
 * The one place that turns errors into the service's responses (spec 7.1): a general error is
 * `{"detail": "…"}`; a 400 validation error is keyed by field, Django REST framework style
 * (`{"external_id": ["This field is required."]}`, nested objects nested, whole-object problems
 * under `non_field_errors`); a 500 adds the `request_id` that is also logged (spec 7.3: capture
 * request details for support). Texts follow DRF, which the real service runs on.
 */

/** Where on the wire each code of the catalogue ends up. */
const STATUS: Partial<Record<ErrorCode, number>> = {
  E_API_VALIDATION: 400,
  E_API_BAD_REQUEST: 400,
  E_API_UNAUTHENTICATED: 401,
  E_API_FORBIDDEN: 403,
  E_API_NOT_FOUND: 404,
  E_API_METHOD_NOT_ALLOWED: 405,
  E_API_UNSUPPORTED_MEDIA_TYPE: 415,
  E_API_THROTTLED: 429,
  // Store errors that reach a route unhandled: a unique key is a DRF-style field error, a
  // missing record a 404. E_STORE_UNAVAILABLE stays a 500 (spec 7.2 names no 503).
  E_STORE_CONFLICT: 400,
  E_STORE_INVALID: 400,
  E_STORE_NOT_FOUND: 404,
  // The app layer's "these arguments do not name one thing" (an API key prefix two keys share,
  // src/app/accounts.ts revokeKey) reaches the lab admin API as the caller's mistake, keyed by
  // the field at fault as DRF would (spec 7.1), not as a 500.
  E_USAGE: 400,
};

/** DRF's texts, where the real service shows them. */
export const DRF = {
  notAuthenticated: "Authentication credentials were not provided.",
  notFound: "Not found.",
  invalidPage: "Invalid page.",
  methodNotAllowed: (method: string) => `Method "${method}" not allowed.`,
  unsupportedMediaType: (type: string) => `Unsupported media type "${type}" in request.`,
  nullInUrl: "Null characters are not allowed (%00 in the URL).",
  throttled: (wait: number) =>
    `Request was throttled. Expected available in ${wait} second${wait === 1 ? "" : "s"}.`,
} as const;

export const SERVER_ERROR_DETAIL =
  "A server error occurred. Quote the request_id when you report it to support.";

/** Constructors for the API's errors; handlers throw these. */
export const apiError = {
  /** 401; `challenge` is the WWW-Authenticate scheme (RFC 9110 §11.6.1). */
  unauthenticated: (detail: string, challenge: "Api-Key" | "Bearer" = "Api-Key") =>
    new RpmlabError("E_API_UNAUTHENTICATED", detail, { challenge }),
  forbidden: (detail: string) => new RpmlabError("E_API_FORBIDDEN", detail),
  notFound: (detail: string = DRF.notFound) => new RpmlabError("E_API_NOT_FOUND", detail),
  /** 400 keyed by field; `fields` is the response body. */
  validation: (fields: FieldErrors) => validationError(fields),
  /** 400 for one field, e.g. field("page", "A valid integer is required."). */
  field: (name: string, message: string) => apiError.validation({ [name]: [message] }),
  badRequest: (detail: string) => new RpmlabError("E_API_BAD_REQUEST", detail),
  methodNotAllowed: (method: string, allow: readonly string[]) =>
    new RpmlabError("E_API_METHOD_NOT_ALLOWED", DRF.methodNotAllowed(method), {
      allow: allow.join(", "),
    }),
  unsupportedMediaType: (type: string) =>
    new RpmlabError("E_API_UNSUPPORTED_MEDIA_TYPE", DRF.unsupportedMediaType(type)),
  /** 429; `waitSeconds` goes to Retry-After. */
  throttled: (waitSeconds: number) =>
    new RpmlabError("E_API_THROTTLED", DRF.throttled(waitSeconds), { retryAfter: waitSeconds }),
};

/**
 * Runs a service call whose E_STORE_NOT_FOUND means "the URL names nothing": 404 with Django's
 * get_object_or_404 text (`detail`, or `detailOf(error)` when what was missing varies).
 */
export async function orNotFound<T>(
  call: Promise<T>,
  detail: string | ((error: RpmlabError) => string),
): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (!isRpmlabError(error, "E_STORE_NOT_FOUND")) throw error;
    throw apiError.notFound(typeof detail === "string" ? detail : detail(error));
  }
}

export interface ErrorResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
}

/** The response for any error thrown while serving `request`. */
export function toErrorResponse(error: unknown, request: FastifyRequest): ErrorResponse {
  if (isRpmlabError(error)) {
    const status = STATUS[error.code];
    if (status !== undefined) return fromRpmlabError(error, status);
  } else if (isClientError(error)) {
    return fromFastifyError(error, request);
  }
  return {
    status: 500,
    body: { detail: SERVER_ERROR_DETAIL, request_id: request.id },
    headers: {},
  };
}

function fromRpmlabError(error: RpmlabError, status: number): ErrorResponse {
  const d = error.details;
  const headers: Record<string, string> = {};
  if (typeof d.challenge === "string") headers["www-authenticate"] = d.challenge;
  if (typeof d.allow === "string") headers.allow = d.allow;
  if (typeof d.retryAfter === "number") headers["retry-after"] = String(d.retryAfter);
  if (error.code === "E_API_VALIDATION") {
    return { status, body: d.fields as FieldErrors, headers };
  }
  if (
    error.code === "E_STORE_CONFLICT" ||
    error.code === "E_STORE_INVALID" ||
    error.code === "E_USAGE"
  ) {
    const field = typeof d.field === "string" ? d.field : "non_field_errors";
    return { status, body: { [field]: [error.message] }, headers };
  }
  return { status, body: { detail: error.message }, headers };
}

function isClientError(error: unknown): error is FastifyError {
  const status = (error as FastifyError | null)?.statusCode;
  return typeof status === "number" && status >= 400 && status < 500;
}

/** Fastify's own 4xx (content type, body size, …) in the service's shape. */
function fromFastifyError(error: FastifyError, request: FastifyRequest): ErrorResponse {
  if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    const type = request.headers["content-type"] ?? "";
    return fromRpmlabError(apiError.unsupportedMediaType(type), 415);
  }
  return { status: error.statusCode ?? 400, body: { detail: error.message }, headers: {} };
}

/** Installs the error handler on the root instance (child scopes inherit it). */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const response = toErrorResponse(error, request);
    if (response.status >= 500) {
      request.log.error({ err: error, request_id: request.id }, "request failed");
    }
    return reply.code(response.status).headers(response.headers).send(response.body);
  });
}
