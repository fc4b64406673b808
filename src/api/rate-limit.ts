import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { RateLimit } from "../config/rate-limit.ts";
import type { Clock } from "../core/clock.ts";
import { apiError } from "./errors.ts";

/**
 * Per-key rate limit (spec 8.4; wire-formats: the real service allows each key 1 request per
 * second, answering 429 with Retry-After). Off unless configured.
 *
 * @fastify/rate-limit does the hooking and headers; its own stores read Date.now(), so the
 * counting is done by ClockWindowStore on the lab's Clock (virtual time in tests and scenarios).
 * The window slides as DRF's throttles do: a request is refused while `max` requests lie in
 * the last `windowMs`, and Retry-After is the time until the oldest of them leaves it.
 */
export async function registerRateLimit(
  scope: FastifyInstance,
  limit: RateLimit,
  clock: Clock,
): Promise<RateLimitCheck> {
  await scope.register(rateLimit, {
    max: limit.max,
    timeWindow: limit.windowMs,
    // Route-level onRequest hooks run after the scope's: the request is authenticated by then.
    hook: "onRequest",
    keyGenerator: (request: FastifyRequest) => request.client?.apiKey.id ?? request.ip,
    store: clockWindowStore(clock),
    // DRF sends Retry-After only; errors.ts sets it from the error below.
    addHeaders: {
      "x-ratelimit-limit": false,
      "x-ratelimit-remaining": false,
      "x-ratelimit-reset": false,
      "retry-after": false,
    },
    addHeadersOnExceeding: {
      "x-ratelimit-limit": false,
      "x-ratelimit-remaining": false,
      "x-ratelimit-reset": false,
    },
    errorResponseBuilder: (_request, context) =>
      apiError.throttled(Math.max(1, Math.ceil(context.ttl / 1000))),
  });
  // The same budget, for requests no route takes (not-found.ts: a known path's other method).
  return scope.rateLimit();
}

/** Counts an authenticated request against its key's budget; throws the 429 when it is spent. */
export type RateLimitCheck = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

type IncrCallback = (error: Error | null, result: { current: number; ttl: number }) => void;

/** The store interface @fastify/rate-limit calls (`new Store(options)`, then incr per request). */
interface WindowStore {
  incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void;
  child(): WindowStore;
}

/** Keys are API key ids: bounded by the keys that exist, so no eviction is needed. */
function clockWindowStore(clock: Clock): new () => WindowStore {
  return class ClockWindowStore implements WindowStore {
    private readonly hits = new Map<string, number[]>();

    incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void {
      const now = clock.now();
      const recent = (this.hits.get(key) ?? []).filter((t) => t > now - timeWindow);
      const oldest = recent[0];
      if (recent.length >= max && oldest !== undefined) {
        // Refused requests are not counted (DRF records only the requests it lets through).
        this.hits.set(key, recent);
        cb(null, { current: max + 1, ttl: oldest + timeWindow - now });
        return;
      }
      recent.push(now);
      this.hits.set(key, recent);
      cb(null, { current: recent.length, ttl: recent[0]! + timeWindow - now });
    }

    child(): WindowStore {
      return new ClockWindowStore();
    }
  };
}
