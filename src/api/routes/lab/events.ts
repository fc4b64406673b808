import type { ServerResponse } from "node:http";
import { SystemClock, type TimerHandle } from "../../../core/clock.ts";
import type { FeedEvent } from "../../../dashboard/feed-events.ts";
import { DETAIL_SCHEMA } from "../../json-schema.ts";
import type { RoutePlugin } from "../../types.ts";

/** Wall ms between `clock` events: the page's clock, and traffic that keeps proxies from timing out. */
const CLOCK_EVERY_MS = 1000;
/**
 * Bytes a client may leave unread before events for it are dropped (and counted, see the
 * `dropped` event): a stalled browser tab must not hold the lab's memory.
 */
const MAX_UNREAD_BYTES = 256 * 1024;
const STREAM_TYPE = "text/event-stream; charset=utf-8";

/**
 * GET /lab/v1/events/: the lab's live feed as Server-Sent Events (the WHATWG HTML standard,
 * §9.2 "Server-sent events"): what the dashboard page shows, and a tap for anyone who wants to
 * watch a lab without polling (`curl -N`). Streams stay open until the client leaves or the lab
 * stops; a stopping lab ends each stream, so closing never waits on a browser.
 */
export const labEventsRoutes: RoutePlugin = async (app, ctx) => {
  const { feed } = ctx;
  // Wall time, whatever the lab's clock: a virtual clock at full speed would flood the page.
  const wall = new SystemClock();
  const open = new Set<ServerResponse>();

  app.addHook("preClose", async () => {
    wall.dispose();
    for (const response of open) response.end();
  });

  // HEAD has a route of its own (below), documented: Fastify's derived one is left out of the
  // OpenAPI document, and would open a stream a HEAD response can never end.
  app.get(
    "/events/",
    {
      exposeHeadRoute: false,
      schema: {
        tags: ["lab"],
        security: [{ AdminToken: [] }],
        summary: "Live feed (Server-Sent Events)",
        description:
          "A text/event-stream that stays open: `clock` (the lab's time, on connecting and every wall second), `batch` (records an ingestion batch stored, exact), `reading` (a stored record with its values, their units and what value 2 means, from the device's catalogue entry; at most 20 of a batch), `gateway` (a check-in, or online false for a gateway's last will), `webhook` (an automatic delivery attempt and the state it left), `fulfilment` (a device's shipping status), `activated` (a device took up its hardware), `dead_letter` (an MQTT message ingestion could not use) and `dropped` (how many events this client missed because it read too slowly; clock ticks are skipped then, not counted). Each event's data is one JSON object; times are the lab's clock (virtual in `rpmlab demo`). Nothing is replayed: a client sees what happens while it is connected, and reads totals from /lab/v1/overview/.",
        response: {
          200: {
            description:
              "The stream, open until the client or the lab closes it: frames of `event: <type>` and `data: <one JSON object>`, each ended by a blank line.",
            content: { "text/event-stream": { schema: { type: "string" } } },
          },
          401: DETAIL_SCHEMA,
          403: DETAIL_SCHEMA,
        },
      },
    },
    async (request, reply) => {
      const response = reply.raw;
      reply.hijack();
      response.writeHead(200, streamHeaders(request.id));
      open.add(response);
      let dropped = 0;
      const full = () => response.writableLength > MAX_UNREAD_BYTES;
      const write = (event: FeedEvent) => {
        if (dropped > 0) {
          response.write(frame({ type: "dropped", count: dropped }));
          dropped = 0;
        }
        response.write(frame(event));
      };
      const send = (event: FeedEvent) => {
        // Gone already, its `close` not yet handled: nothing to write to.
        if (response.destroyed) return;
        if (full()) dropped++;
        else write(event);
      };
      let timer: TimerHandle | undefined;
      // A tick the client has no room for is skipped, not counted: the next one tells the time.
      const tick = () => {
        if (!full()) write(feed.clockEvent());
        timer = wall.setTimeout(tick, CLOCK_EVERY_MS);
      };
      const unsubscribe = feed.subscribe(send);
      response.on("close", () => {
        unsubscribe();
        if (timer !== undefined) wall.clearTimeout(timer);
        open.delete(response);
      });
      tick();
    },
  );

  // A probe (a proxy's health check, `curl -I`) learns what GET would answer without a stream:
  // node drops a HEAD response's body, so frames would never end it (RFC 9110 §9.3.2).
  app.head(
    "/events/",
    {
      // @fastify/swagger leaves HEAD routes out unless told; this one behaves unlike its GET.
      config: { swagger: { exposeHeadRoute: true } },
      schema: {
        tags: ["lab"],
        security: [{ AdminToken: [] }],
        summary: "Live feed's headers, no stream",
        description:
          "What GET /lab/v1/events/ answers before its first event — status and headers — and nothing more: the response ends at once, no stream is opened.",
        response: {
          200: {
            type: "null",
            description: "The stream's headers, no body.",
            headers: {
              "Content-Type": { type: "string", const: STREAM_TYPE },
              "Cache-Control": { type: "string", const: "no-store" },
            },
          },
          401: DETAIL_SCHEMA,
          403: DETAIL_SCHEMA,
        },
      },
    },
    async (request, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, streamHeaders(request.id));
      reply.raw.end();
    },
  );
};

/** What GET answers before its first frame, and HEAD alone. */
function streamHeaders(requestId: string): Record<string, string> {
  return {
    "content-type": STREAM_TYPE,
    "cache-control": "no-store",
    // nginx and its kind buffer responses unless told not to.
    "x-accel-buffering": "no",
    "x-request-id": requestId,
  };
}

/** One event: its type as the event name, the rest as one line of JSON. */
function frame(event: FeedEvent): string {
  const { type, ...data } = event;
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
