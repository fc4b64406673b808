import type { Clock } from "../core/clock.ts";
import type { Rng } from "../core/rng.ts";
import type { WebhookRow } from "../store/types-ingest.ts";
import type { AttemptOutcome, DeliveryRow } from "../store/types-webhooks.ts";
import { endpointOf, loggedEndpoint } from "./endpoint.ts";
import { parseHttpDate } from "./http-date.ts";
import { nextAttemptAt } from "./retry-policy.ts";
import type { WebhookRequest, WebhookResponse, WebhookSender } from "./sender.ts";
import { SIGNATURE_HEADER, signatureHeader } from "./signature.ts";

/** The delivery's UUID: the same on every attempt, so a receiver can tell a repeat. */
export const DELIVERY_HEADER = "X-Rpmlab-Delivery";
/** MEASUREMENT, FULFILLMENT, SPECIAL_ORDER or PATIENT. */
export const EVENT_HEADER = "X-Rpmlab-Event";
/** 1 for the first attempt. */
export const ATTEMPT_HEADER = "X-Rpmlab-Attempt";
export const USER_AGENT = "rpmlab-webhooks/1";

/**
 * Header names a webhook's auth_header may not take (lower case): those that frame the message
 * or manage the connection (RFC 9110 §7.2 Host, §8.6 Content-Length, §7.6.1 Connection and the
 * hop-by-hop fields it names; RFC 9112 §6.1 Transfer-Encoding; §10.1.1 Expect), which undici
 * refuses or which would make every attempt fail, and those rpmlab sets on each POST itself.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "content-type",
  "user-agent",
  DELIVERY_HEADER.toLowerCase(),
  EVENT_HEADER.toLowerCase(),
  ATTEMPT_HEADER.toLowerCase(),
  SIGNATURE_HEADER.toLowerCase(),
]);

export interface AttemptDeps {
  readonly sender: WebhookSender;
  readonly clock: Clock;
  /** Retry jitter: forked per delivery and attempt, so a restart draws the same waits. */
  readonly rng: Rng;
}

/**
 * The POST of one attempt: the webhook's endpoint as it is now, its static auth header
 * (wire-formats: auth_header/auth_key "sent with each POST") or the endpoint's own credentials
 * (Basic, endpoint.ts), rpmlab's delivery headers, and the
 * signature when the webhook has a secret. The API refuses a reserved auth_header; one stored
 * before it did is left out here, in any case of letters, so it can neither hide rpmlab's
 * headers nor break the request.
 */
export function webhookRequest(
  delivery: DeliveryRow,
  webhook: WebhookRow,
  number: number,
  atMs: number,
): WebhookRequest {
  const headers: Record<string, string> = {};
  const { authHeader, authKey } = webhook;
  if (authHeader !== null && authKey !== null && !RESERVED_HEADERS.has(authHeader.toLowerCase())) {
    headers[authHeader] = authKey;
  }
  // `user:password@` in the endpoint: Basic auth, unless auth_header is an Authorization of its own.
  const credentials = endpointOf(webhook.endpoint)?.authorization ?? null;
  if (
    credentials !== null &&
    !Object.keys(headers).some((h) => h.toLowerCase() === "authorization")
  ) {
    headers.authorization = credentials;
  }
  headers["content-type"] = "application/json";
  headers["user-agent"] = USER_AGENT;
  headers[DELIVERY_HEADER] = delivery.id;
  headers[EVENT_HEADER] = delivery.event;
  headers[ATTEMPT_HEADER] = String(number);
  if (webhook.signingSecret !== null) {
    headers[SIGNATURE_HEADER] = signatureHeader(webhook.signingSecret, delivery.body, atMs);
  }
  return { url: webhook.endpoint, headers, body: delivery.body };
}

/**
 * One attempt at a delivery and what it leads to: delivered on a 2xx; otherwise a measurement
 * delivery waits for its next attempt (retry-policy.ts) or gives up as failed, and any other kind
 * is not retried (spec 6.1). A manual resend changes a delivery only when it succeeds, and the
 * backoff counts automatic failures only, so resends never push the next attempt further away.
 * A webhook deleted meanwhile, or made another kind (PUT/PATCH `event`), fails the delivery
 * without a request: its body is of the kind it was made for, which the endpoint no longer takes.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  delivery: DeliveryRow,
  webhook: WebhookRow | null,
  opts: { readonly manual: boolean },
): Promise<AttemptOutcome> {
  const number = delivery.attempts + 1;
  const at = deps.clock.now();
  if (webhook === null || webhook.event !== delivery.event) {
    return {
      deliveryId: delivery.id,
      attempt: {
        at,
        endpoint: null,
        statusCode: null,
        error: whyGone(delivery, webhook),
        latencyMs: 0,
        responseSnippet: null,
        manual: opts.manual,
      },
      // A resend's failure changes nothing but the log (as below); an automatic attempt gives up.
      state: opts.manual || delivery.state === "delivered" ? null : "failed",
      nextAttemptAt: null,
    };
  }
  const request = webhookRequest(delivery, webhook, number, at);
  const response = await deps.sender.send(request);
  const ok =
    response.statusCode !== null && response.statusCode >= 200 && response.statusCode < 300;
  const secrets =
    response.snippet === null && response.error === null ? [] : sentSecrets(webhook, request);
  const attempt = {
    at,
    endpoint: loggedEndpoint(webhook.endpoint),
    statusCode: response.statusCode,
    error: response.error === null ? null : masked(response.error, secrets),
    latencyMs: response.latencyMs,
    responseSnippet: response.snippet === null ? null : masked(response.snippet, secrets),
    manual: opts.manual,
  };
  const id = delivery.id;
  if (ok) return { deliveryId: id, attempt, state: "delivered", nextAttemptAt: null };
  if (opts.manual) return { deliveryId: id, attempt, state: null, nextAttemptAt: null };
  if (!delivery.retry || delivery.test) {
    return { deliveryId: id, attempt, state: "not_retried", nextAttemptAt: null };
  }
  const now = deps.clock.now();
  const next = nextAttemptAt({
    created: delivery.created,
    now,
    attempts: number - delivery.manualAttempts,
    retryAfterMs: retryAfterMs(response, now),
    rng: deps.rng.fork(`delivery:${delivery.id}/attempt:${number}`),
  });
  return next === null
    ? { deliveryId: id, attempt, state: "failed", nextAttemptAt: null }
    : { deliveryId: id, attempt, state: "pending", nextAttemptAt: next };
}

/** Shorter secrets are left in the log: masking them would garble the text around them. */
const MIN_MASKED = 6;

/**
 * The credentials an attempt sent (the auth_key, the Basic credentials and what the endpoint URL
 * carries), as the delivery log must not show them: an echoing receiver (httpbin's /post, Postman
 * Echo) answers them back, and the log's endpoint hides them (README "Delivery log"). Longest
 * first, each also as a JSON string escapes it (an echo answers JSON).
 */
function sentSecrets(webhook: WebhookRow, request: WebhookRequest): string[] {
  const secrets = [...(endpointOf(webhook.endpoint)?.secrets ?? [])];
  const key = webhook.authHeader === null ? undefined : request.headers[webhook.authHeader];
  if (key !== undefined) secrets.push(key);
  const basic = request.headers.authorization;
  if (basic?.startsWith("Basic ")) secrets.push(basic.slice(6));
  // Most webhooks send none: every attempt is logged, and this runs for each.
  if (secrets.length === 0) return secrets;
  const all = secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]);
  return [...new Set(all)]
    .filter((s) => s.length >= MIN_MASKED)
    .sort((a, b) => b.length - a.length);
}

function masked(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => out.replaceAll(secret, "***"), text);
}

/**
 * RFC 9110 §10.2.3: delay-seconds, or an HTTP-date (§5.6.7, any of its three forms) counted from
 * the answer's own Date (§6.6.1, the server's clock on both sides: right on a virtual lab clock
 * or a skewed server), else from the lab's now.
 */
function retryAfterMs(response: WebhookResponse, now: number): number | null {
  const value = response.retryAfter?.trim();
  if (value === undefined) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = parseHttpDate(value, now);
  if (!Number.isFinite(at)) return null;
  const sent = response.date === null ? Number.NaN : parseHttpDate(response.date.trim(), now);
  return Math.max(0, at - (Number.isFinite(sent) ? sent : now));
}

/**
 * Why a delivery can no longer go to its webhook: the webhook was deleted, or now takes another
 * kind of event (spec 6.1 kinds; a strict consumer of the new kind refuses the body, as
 * wire-formats' consumers refuse what their kind does not send).
 */
function whyGone(delivery: DeliveryRow, webhook: WebhookRow | null): string {
  return webhook === null
    ? "the webhook was deleted"
    : `the webhook now takes ${webhook.event} events, not ${delivery.event}`;
}
