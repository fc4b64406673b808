import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";

/**
 * Fastify's router refuses some URLs before any route or hook runs: a percent-escape that is
 * not UTF-8 (`/hwi-patients/%FF/`) and a path parameter longer than the router's limit. Left to
 * Fastify they answer its own JSON (`{"error", "code", "message", "statusCode"}`) without the
 * X-Request-Id every other answer carries; here they get the service's `{"detail"}` (spec 7.1),
 * naming what is wrong, with the router's status (400, 414).
 */
export function frameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const path = request.raw.url?.split("?")[0] ?? "";
  const detail =
    error.code === "FST_ERR_BAD_URL"
      ? `The path is not a valid URL: ${badEscape(path)} is not a percent-encoded UTF-8 sequence.`
      : error.code === "FST_ERR_MAX_PARAM_LENGTH"
        ? "A path segment is too long."
        : "The request could not be routed.";
  void reply
    .code(error.statusCode ?? 400)
    .header("x-request-id", request.id)
    .send({ detail });
}

/** The first run of percent-escapes in `path` that does not decode, quoted. */
function badEscape(path: string): string {
  for (const run of path.match(/%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*|%.{0,2}/g) ?? []) {
    try {
      decodeURIComponent(run);
    } catch {
      return `"${run}"`;
    }
  }
  return `"${path}"`;
}
