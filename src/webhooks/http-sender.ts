import { Pool } from "undici";
import type { WebhookDeliveryConfig } from "../config/webhook-config.ts";
import { startStopwatch } from "../core/stopwatch.ts";
import {
  SNIPPET_CHARS,
  snippetOf,
  type WebhookRequest,
  type WebhookResponse,
  type WebhookSender,
} from "./sender.ts";

/** Bytes of an answer read before its connection is given up rather than drained. */
const DRAIN_LIMIT = 64 * 1024;

/**
 * Posts with undici: one keep-alive pool per endpoint origin, at most `concurrency` connections
 * each, so a slow or dead endpoint ties up its own connections and never another's (the
 * dispatcher's lanes keep its queue too). Every attempt is bounded by `timeoutMs` to connect,
 * to get the answer's headers and between chunks of its body. Redirects are not followed (a 3xx
 * is a failed attempt, as a 4xx or 5xx).
 */
export class HttpSender implements WebhookSender {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly config: WebhookDeliveryConfig) {}

  async send(request: WebhookRequest, signal?: AbortSignal): Promise<WebhookResponse> {
    const elapsed = startStopwatch();
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return failed(`not a valid URL: ${request.url}`, elapsed());
    }
    try {
      const { statusCode, headers, body } = await this.pool(url.origin).request({
        method: "POST",
        path: `${url.pathname}${url.search}`,
        headers: request.headers,
        body: request.body,
        ...(signal === undefined ? {} : { signal }),
      });
      const chunks: Buffer[] = [];
      let read = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        if (read < SNIPPET_CHARS * 4) chunks.push(chunk);
        read += chunk.length;
        // Breaking off destroys the body: that connection closes instead of draining forever.
        if (read > DRAIN_LIMIT) break;
      }
      const text = Buffer.concat(chunks)
        .subarray(0, SNIPPET_CHARS * 4)
        .toString("utf8");
      const retryAfter = headers["retry-after"];
      return {
        statusCode,
        error: null,
        latencyMs: elapsed(),
        snippet: text === "" ? null : snippetOf(text, read > SNIPPET_CHARS * 4),
        retryAfter: typeof retryAfter === "string" ? retryAfter : null,
      };
    } catch (error) {
      return failed(describeError(error, this.config.timeoutMs), elapsed());
    }
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  private pool(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (pool === undefined) {
      const { timeoutMs, concurrency } = this.config;
      pool = new Pool(origin, {
        connections: concurrency,
        connect: { timeout: timeoutMs },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }
}

function failed(error: string, latencyMs: number): WebhookResponse {
  return { statusCode: null, error, latencyMs, snippet: null, retryAfter: null };
}

/** What the delivery log says about a failed request. */
function describeError(error: unknown, timeoutMs: number): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case "UND_ERR_CONNECT_TIMEOUT":
      return `could not connect within ${timeoutMs} ms`;
    case "UND_ERR_HEADERS_TIMEOUT":
      return `no answer within ${timeoutMs} ms`;
    case "UND_ERR_BODY_TIMEOUT":
      return `the answer's body stalled for ${timeoutMs} ms`;
    case "UND_ERR_ABORTED":
      return "aborted: the lab stopped";
    case "ECONNREFUSED":
      return "connection refused";
    default:
      if (error instanceof Error && error.name === "AbortError") return "aborted: the lab stopped";
      return typeof code === "string" ? `${code}: ${message}` : message;
  }
}
