import { Agent, type Dispatcher } from "undici";
import type { WebhookDeliveryConfig } from "../config/webhook-config.ts";
import { startStopwatch } from "../core/stopwatch.ts";
import { endpointOf } from "./endpoint.ts";
import type { WebhookRequest, WebhookResponse, WebhookSender } from "./sender.ts";
import { SNIPPET_CHARS, snippetOf } from "./snippet.ts";

/**
 * Bytes of an answer read before its connection is given up rather than drained; and the body
 * is read for at most one timeout after the headers (a trickle of bytes, each within the timeout
 * between chunks, held the attempt for hours): the status decides the attempt, the body is only
 * the log's snippet.
 */
const DRAIN_LIMIT = 64 * 1024;
/** Bytes kept for the snippet (SNIPPET_CHARS characters of UTF-8 at most). */
const SNIPPET_BYTES = SNIPPET_CHARS * 4;

/**
 * Posts with undici: one keep-alive pool per endpoint origin, at most `concurrency` connections
 * each, so a slow or dead endpoint ties up its own connections and never another's (the
 * dispatcher's lanes keep its queue too). The pools are an undici Agent's, which closes an
 * origin's pool once its last connection has closed (idle past keep-alive, or refused): a lab
 * whose endpoints change over time (tunnels, CI receivers on fresh ports) keeps no pool for
 * each one it ever posted to. Every attempt is bounded by `timeoutMs` to connect, to get the
 * answer's headers, between chunks of its body, and once more for the whole body. Redirects are
 * not followed (a 3xx is a failed attempt, as a 4xx or 5xx).
 */
export class HttpSender implements WebhookSender {
  private agent: Agent | undefined;

  constructor(private readonly config: WebhookDeliveryConfig) {}

  send(request: WebhookRequest): Promise<WebhookResponse> {
    const elapsed = startStopwatch();
    const endpoint = endpointOf(request.url);
    if (endpoint === null) {
      return Promise.resolve(failed(`not a valid URL: ${request.url}`, elapsed()));
    }
    const { timeoutMs } = this.config;
    // undici's dispatch with a handler: no stream or promise per answer, which costs a third of
    // the throughput of request() (test/bench/webhooks.ts).
    return new Promise((resolve) => {
      let statusCode = 0;
      let retryAfter: string | null = null;
      let date: string | null = null;
      const chunks: Buffer[] = [];
      let read = 0;
      let headersAt = 0;
      /** The body was cut short here (too long, too slow): the answer still counts. */
      let cut = false;
      let abort: ((error?: Error) => void) | undefined;
      // undici's (legacy) handler interface, the one its dispatchers accept directly.
      const handler: Dispatcher.DispatchHandler = {
        onConnect(cancel) {
          abort = cancel;
        },
        onHeaders(status, rawHeaders) {
          statusCode = status;
          headersAt = elapsed();
          retryAfter = headerValue(rawHeaders, "retry-after");
          if (retryAfter !== null) date = headerValue(rawHeaders, "date");
          return true;
        },
        onData(chunk) {
          if (read < SNIPPET_BYTES) chunks.push(chunk);
          read += chunk.length;
          // Given up rather than drained forever: that connection closes.
          if (read > DRAIN_LIMIT || elapsed() - headersAt > timeoutMs) {
            cut = true;
            abort?.(new Error("the answer's body is too long or too slow"));
          }
          return true;
        },
        onComplete() {
          resolve(answered(statusCode, chunks, read, { retryAfter, date }, elapsed()));
        },
        onError(error) {
          // A body cut off after its status came: the answer counts, its body is a snippet.
          if (statusCode !== 0 && cut) {
            resolve(answered(statusCode, chunks, read, { retryAfter, date }, elapsed(), true));
          } else {
            resolve(failed(describeError(error, timeoutMs), elapsed()));
          }
        },
      };
      this.pools().dispatch(
        {
          origin: endpoint.origin,
          method: "POST",
          path: endpoint.path,
          headers: request.headers,
          body: request.body,
        },
        handler,
      );
    });
  }

  async abort(): Promise<void> {
    const agent = this.agent;
    this.agent = undefined;
    // Requests under way reject (UND_ERR_DESTROYED); later ones get new pools.
    await agent?.destroy();
  }

  async close(): Promise<void> {
    const agent = this.agent;
    this.agent = undefined;
    await agent?.close();
  }

  private pools(): Agent {
    if (this.agent === undefined) {
      const { timeoutMs, concurrency } = this.config;
      this.agent = new Agent({
        connections: concurrency,
        connect: { timeout: timeoutMs },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    }
    return this.agent;
  }
}

/** A header of undici's raw list (name, value, name, value…), or null. */
function headerValue(raw: Buffer[] | string[] | null, name: string): string | null {
  if (raw === null) return null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    // Names of another length are not decoded: most answers carry five or six headers.
    const key = raw[i]!;
    if (key.length === name.length && String(key).toLowerCase() === name) {
      return String(raw[i + 1]);
    }
  }
  return null;
}

function answered(
  statusCode: number,
  chunks: Buffer[],
  read: number,
  headers: Pick<WebhookResponse, "retryAfter" | "date">,
  latencyMs: number,
  /** Cut short here: the snippet says so even when what came fits. */
  cut = false,
): WebhookResponse {
  const text = Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString("utf8");
  return {
    statusCode,
    error: null,
    latencyMs,
    snippet: text === "" ? null : snippetOf(text, cut || read > SNIPPET_BYTES),
    ...headers,
  };
}

function failed(error: string, latencyMs: number): WebhookResponse {
  return { statusCode: null, error, latencyMs, snippet: null, retryAfter: null, date: null };
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
    case "UND_ERR_DESTROYED":
      return "aborted: the lab stopped";
    case "ECONNREFUSED":
      return "connection refused";
    default:
      return typeof code === "string" ? `${code}: ${message}` : message;
  }
}
