import {
  DEFAULT_WEBHOOK_CONCURRENCY,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  parseWebhookSenderSpec,
  type WebhookDeliveryConfig,
} from "../config/webhook-config.ts";
import { HttpSender } from "./http-sender.ts";
import { RecordSender } from "./record-sender.ts";

/** One POST of a delivery. */
export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** JSON text. */
  readonly body: string;
}

/** How it went; a sender never throws. */
export interface WebhookResponse {
  /** Null when no answer came (error says why). */
  readonly statusCode: number | null;
  readonly error: string | null;
  /** Real milliseconds from sending to the end of the answer. */
  readonly latencyMs: number;
  /** The start of the answer's body (at most SNIPPET_CHARS, "…" when cut; snippet.ts). */
  readonly snippet: string | null;
  /** The Retry-After header of the answer, as sent. */
  readonly retryAfter: string | null;
  /**
   * The Date header of the answer, as sent: the server's own now, from which a Retry-After
   * HTTP-date counts (neither the lab's clock, virtual in scenarios, nor this machine's).
   */
  readonly date: string | null;
}

/**
 * The webhook sender boundary (DESIGN.md "Boundaries"): `http` (undici) or `record` (in memory,
 * tests only), chosen by a spec string.
 */
export interface WebhookSender {
  send(request: WebhookRequest): Promise<WebhookResponse>;
  /** Cuts off every request under way: each answers with an error (the lab is stopping). */
  abort(): Promise<void>;
  /** Lets requests under way finish, then closes the connections. */
  close(): Promise<void>;
}

export function createWebhookSender(
  spec: string,
  config: Partial<WebhookDeliveryConfig> = {},
): WebhookSender {
  const parsed = parseWebhookSenderSpec(spec);
  if (parsed.kind === "record") return new RecordSender();
  return new HttpSender({
    timeoutMs: config.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    concurrency: config.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY,
  });
}
