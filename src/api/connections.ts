import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
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

/**
 * What Node's HTTP parser refuses before there is a request (Fastify's clientErrorHandler): a
 * header section over Node's 16 KiB (431; a request line that long too), a request that took too
 * long to arrive (408), bytes that are not HTTP (400) — answered in the API's own error shape,
 * `{"detail": "…"}`, then the connection closes.
 */
export function clientErrorAnswer(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, detail] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "Request header fields too large: the request line and headers exceed 16 KiB."]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "The request took too long to arrive."]
        : [400, "Malformed HTTP request."];
  const body = JSON.stringify({ detail });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
