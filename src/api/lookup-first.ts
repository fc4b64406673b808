import type { FastifyRequest, preParsingAsyncHookHandler } from "fastify";

/**
 * DRF's order on a detail route that takes a body: the view looks its object up (get_object,
 * 404) before it reads request.data, so an unknown id answers 404 whatever the body is —
 * malformed, of another content type, or invalid. As a route's preParsing hook it runs after
 * authentication and the rate limit (onRequest hooks) and before the body is parsed (415, JSON
 * 400) and validated (400 keyed by field). `find` throws the route's own 404 when the path names
 * nothing; the params are the raw strings of the path (not validated yet).
 */
export function lookupFirst(
  find: (params: Readonly<Record<string, string>>, request: FastifyRequest) => Promise<unknown>,
): preParsingAsyncHookHandler {
  return async (request, _reply, payload) => {
    await find(request.params as Record<string, string>, request);
    return payload;
  };
}
