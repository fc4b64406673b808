import type { FastifyBaseLogger, FastifyRequest } from "fastify";
import type { Logger } from "../core/logger.ts";
import { maskApiKeys } from "../store/api-key-secret.ts";

/**
 * The `req` of Fastify's "incoming request" log line, as Fastify writes it, the URL with every
 * whole API key masked to its listed prefix: `DELETE /lab/v1/accounts/{domain}/keys/{key}/`
 * revokes by the key itself (README "rpmlab keys"), and a key pasted into a query string is
 * still a key. `serve` logs each request at info, to a log its readers do not hold keys for.
 */
function loggedRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: maskApiKeys(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** The lab's logger as the API's Fastify instance takes it: requests logged as above. */
export function apiLogger(logger: Logger): FastifyBaseLogger {
  return logger.child({}, { serializers: { req: loggedRequest } }) as FastifyBaseLogger;
}
