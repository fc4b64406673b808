import { RpmlabError } from "../core/errors.ts";

/**
 * The webhook sender boundary (DESIGN.md "Boundaries"): `http` posts with undici over keep-alive
 * pools; `record` keeps the requests in memory and answers them itself (tests only).
 */
export type WebhookSenderSpec = { readonly kind: "http" } | { readonly kind: "record" };

export const DEFAULT_WEBHOOK_SENDER = "http";

export function parseWebhookSenderSpec(spec: string): WebhookSenderSpec {
  const text = spec.trim();
  if (text === "http" || text === "record") return { kind: text };
  throw new RpmlabError(
    "E_CONFIG_INVALID",
    `invalid webhook sender "${spec}": expected http, or record (tests only)`,
    { field: "webhook-sender", value: spec },
  );
}

/** How the lab posts webhooks to one endpoint (a scheme, host and port). */
export interface WebhookDeliveryConfig {
  /** Each attempt's limit: connecting, then the answer's headers, then its body, each. */
  readonly timeoutMs: number;
  /** Requests in flight to one endpoint at most; more wait their turn (spec: none shown). */
  readonly concurrency: number;
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
export const DEFAULT_WEBHOOK_CONCURRENCY = 8;

const DURATION = /^(\d{1,9})\s*(ms|s)?$/i;
/** The longest webhook timeout a sender may have (serve's --webhook-timeout), ms. */
export const MAX_WEBHOOK_TIMEOUT_MS = 600_000;

/**
 * "10s", "2500ms" or "2500" (ms); from 100 ms to 10 minutes. `option` names the flag at fault:
 * serve's --webhook-timeout, or --timeout of `rpmlab webhooks resend|test`.
 */
export function parseWebhookTimeout(text: string, option = "--webhook-timeout"): number {
  const m = DURATION.exec(text.trim());
  const ms = m === null ? Number.NaN : Number(m[1]) * (m[2]?.toLowerCase() === "s" ? 1000 : 1);
  if (!(ms >= 100 && ms <= MAX_WEBHOOK_TIMEOUT_MS)) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `${option} must be a duration from 100ms to 600s (e.g. 10s, 2500ms), got "${text}"`,
      { field: option.replace(/^--/, ""), value: text },
    );
  }
  return ms;
}

/** A whole number from 1 to 256. */
export function parseWebhookConcurrency(text: string): number {
  const n = /^\d{1,3}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(n >= 1 && n <= 256)) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--webhook-concurrency must be a whole number from 1 to 256, got "${text}"`,
      { field: "webhook-concurrency", value: text },
    );
  }
  return n;
}
