import type { FastifyInstance } from "fastify";
import { SystemClock, type TimerHandle } from "../core/clock.ts";

/**
 * How long a request's whole message may take to arrive (Node's server.requestTimeout, which
 * Fastify turns off by default): a client that trickles or stalls a body — one byte a minute
 * under its Content-Length — is answered 408 and closed, not held for ever (slowloris).
 */
export const REQUEST_TIMEOUT_MS = 60_000;

/** On close, how long requests under way may finish before their connections are closed. */
export const CLOSE_GRACE_MS = 2_000;

/**
 * Closing the app ends the connections it still holds after a grace: Fastify closes idle ones at
 * once and waits for requests under way, and a client holding a request open would hold the
 * lab's shutdown (SIGINT, SIGTERM) with it.
 */
export function registerCloseGrace(app: FastifyInstance): void {
  const wall = new SystemClock();
  let grace: TimerHandle | undefined;
  app.addHook("preClose", async () => {
    grace = wall.setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
  });
  app.addHook("onClose", async () => {
    if (grace !== undefined) wall.clearTimeout(grace);
    wall.dispose();
  });
}
