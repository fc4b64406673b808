import type { FastifyInstance } from "fastify";
import type { Store } from "../store/store.ts";
import { authenticate, clientDomainOf } from "./auth.ts";
import { apiError } from "./errors.ts";
import type { RateLimitCheck } from "./rate-limit.ts";
import type { KnownRoutes } from "./route-table.ts";

/**
 * Requests no route matched (spec 7.3 first checks), in the order the real service (Django
 * CommonMiddleware, then DRF) answers them:
 * 1. a known path with another method: the scope's authentication and a client scope's rate
 *    limit first (DRF's initial() authenticates and throttles before it looks up the handler:
 *    the request counts, and a throttled key gets 429), then 405 with an Allow header;
 * 2. a known path but for its trailing slash: 301 to the slashed URL, query kept, before any
 *    authentication (clients that follow it drop the Authorization header and then see 401);
 * 3. anything else: 404 `{"detail": "Not found."}`.
 */
export function registerNotFound(
  app: FastifyInstance,
  table: KnownRoutes,
  deps: { store: Store; adminToken: string; rateLimit: () => RateLimitCheck | undefined },
): void {
  app.setNotFoundHandler(async (request, reply) => {
    const at = request.url.indexOf("?");
    const path = at < 0 ? request.url : request.url.slice(0, at);
    const query = at < 0 ? "" : request.url.slice(at);
    const known = table.match(path);
    if (known !== undefined) {
      if (known.scope !== null) {
        await authenticate(request, known.scope, deps, clientDomainOf(path));
        if (known.scope !== "lab") await deps.rateLimit()?.(request, reply);
      }
      throw apiError.methodNotAllowed(request.method, known.allow);
    }
    if (!path.endsWith("/") && table.match(`${path}/`) !== undefined) {
      return reply.code(301).header("location", `${path}/${query}`).send();
    }
    throw apiError.notFound();
  });
}
