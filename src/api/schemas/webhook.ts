import { z } from "zod";
import {
  booleanField,
  charField,
  choiceField,
  drfObject,
  urlField,
} from "../../core/drf-fields.ts";
import { toIsoMicros } from "../../core/time.ts";
import {
  type NewWebhook,
  WEBHOOK_EVENTS,
  type WebhookPatch,
  type WebhookRow,
} from "../../store/types-ingest.ts";
import { RESERVED_HEADERS } from "../../webhooks/attempt.ts";
import { generateSigningSecret } from "../../webhooks/signature.ts";
import { iso, toJsonSchema } from "../json-schema.ts";
import { listSchemas } from "../pagination.ts";

/** The webhook registry (wire-formats "Webhook registry"; spec 6.1, 6.3). */

const SECRET_HELP =
  'true: the lab makes a secret (whsec_…), shown in this answer only; a string: your own secret (24 to 200 visible ASCII characters); false or "": requests are not signed; null, as reads show the hidden secret: unchanged on PUT and PATCH (so a read written back keeps the signing), none on POST.';
const SECRET_PATTERN = /^[\x21-\x7e]{24,200}$/;

/** RFC 9110 §5.1: a field name is a token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const FIELDS = {
  endpoint: urlField({ maxLength: 2000, example: "https://example.com/rpm/webhooks" }).describe(
    'Where the lab POSTs: an absolute http or https URL. `user:password@` in it is sent as HTTP Basic auth (unless auth_header is an Authorization of its own), and shown as `user:***@` in the delivery log, as are the values of query parameters named like secrets (`?token=***`; README "Delivery log").',
  ),
  auth_header: charField({ allowBlank: true, maxLength: 100 })
    .refine((v) => v === "" || HEADER_NAME.test(v), { error: "Enter a valid HTTP header name." })
    .refine((v) => !RESERVED_HEADERS.has(v.toLowerCase()), {
      error: "The lab sets this header itself on every POST: choose another name.",
    })
    .nullable()
    .optional()
    .describe(
      "Name of a static header sent with each POST, e.g. Authorization (optional; needs auth_key).",
    ),
  auth_key: charField({ allowBlank: true, maxLength: 1000 })
    .refine((v) => !/[\r\n]/.test(v), { error: "Header values may not contain line breaks." })
    // RFC 9110 §5.5 field-value: visible ASCII, spaces and tabs, obs-text (0x80–0xFF); anything
    // else no HTTP client sends, and every delivery would fail.
    .refine((v) => /^[\t\x20-\x7e\x80-\xff]*$/.test(v), {
      error:
        "Header values may hold only visible ASCII, spaces, tabs and characters up to U+00FF (RFC 9110 field-value).",
    })
    .nullable()
    .optional()
    .describe("Value of that header, e.g. Bearer <token>; needs auth_header."),
  event: choiceField(WEBHOOK_EVENTS)
    .optional()
    .describe("MEASUREMENT (default), FULFILLMENT, SPECIAL_ORDER or PATIENT (spec 6.1)."),
  post_as_array: booleanField()
    .optional()
    .describe(
      "true: the coincident records of one physical reading go as one JSON array; false (default): one POST per record.",
    ),
  enabled_by_default: booleanField()
    .optional()
    .describe(
      "MEASUREMENT webhooks (spec 6.3.1). Default true: the webhook receives every device's data; false: only devices whose measurement_webhook_id names it (spec 6.3.2). Other kinds receive every event of their kind.",
    ),
  signing_secret: z
    .union([z.boolean(), z.string(), z.null()], { error: SECRET_HELP })
    .refine((v) => typeof v !== "string" || v === "" || SECRET_PATTERN.test(v), {
      error: "A signing secret is 24 to 200 visible ASCII characters, without spaces.",
    })
    .optional()
    .describe(
      `rpmlab's addition, opt-in: ${SECRET_HELP} With a secret, every POST carries X-Rpmlab-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"> (README "Webhooks").`,
    ),
};

export const NEEDS_HEADER = "This field is required when auth_key is set.";
export const NEEDS_KEY = "This field is required when auth_header is set.";

const nonBlank = (v: string | null | undefined) => v !== undefined && v !== null && v !== "";

/** A static auth header needs its name as well as its value. */
export function headerMissing(b: {
  auth_header?: string | null | undefined;
  auth_key?: string | null | undefined;
}): boolean {
  return nonBlank(b.auth_key) && !nonBlank(b.auth_header);
}

/**
 * And its value as well as its name (wire-formats "Webhook registry": auth_header/auth_key are
 * one static header): a name alone was stored, and every POST went without the header, unsaid.
 */
export function keyMissing(b: {
  auth_header?: string | null | undefined;
  auth_key?: string | null | undefined;
}): boolean {
  return nonBlank(b.auth_header) && !nonBlank(b.auth_key);
}

/** POST and PUT: the whole webhook; fields left out take their defaults. */
export const WebhookBody = drfObject({ ...FIELDS })
  .refine((b) => !headerMissing(b), { error: NEEDS_HEADER, path: ["auth_header"] })
  .refine((b) => !keyMissing(b), { error: NEEDS_KEY, path: ["auth_key"] });

/** PATCH: any subset. */
export const WebhookPatchBody = drfObject({ ...FIELDS, endpoint: FIELDS.endpoint.optional() });

export type WebhookInput = z.output<typeof WebhookBody>;
export type WebhookPatchInput = z.output<typeof WebhookPatchBody>;

export const WebhookOut = z.object({
  id: z.string(),
  created: iso(),
  modified: iso(),
  endpoint: z.string(),
  auth_header: z.string().nullable(),
  auth_key: z.string().nullable(),
  event: z.enum(WEBHOOK_EVENTS),
  post_as_array: z.boolean(),
  enabled_by_default: z.boolean(),
  signed: z.boolean().describe("rpmlab's addition: requests carry X-Rpmlab-Signature."),
  signing_secret: z
    .string()
    .nullable()
    .describe(
      "The signing secret, in the answer to the request that set it only (store it then); null otherwise.",
    ),
});

export const WEBHOOK_JSON_SCHEMA = toJsonSchema(WebhookOut);
export const WEBHOOK_LISTS = listSchemas(WEBHOOK_JSON_SCHEMA);

/** The wire form; `revealSecret` in the answer to the request that set the secret only. */
export function webhookJson(w: WebhookRow, revealSecret = false): z.output<typeof WebhookOut> {
  return {
    id: w.id,
    created: toIsoMicros(w.created),
    modified: toIsoMicros(w.modified),
    endpoint: w.endpoint,
    auth_header: w.authHeader,
    auth_key: w.authKey,
    event: w.event,
    post_as_array: w.postAsArray,
    enabled_by_default: w.enabledByDefault,
    signed: w.signingSecret !== null,
    signing_secret: revealSecret ? w.signingSecret : null,
  };
}

/**
 * A signing_secret as sent: true makes one; a string is the secret; false, "": none. null is what
 * every read shows for a hidden secret, so it keeps `current` (none on POST): a client that
 * writes back what it read (GET, change a field, PUT or PATCH) must not turn signing off unseen.
 */
function secretOf(v: boolean | string | null, current: string | null): string | null {
  if (v === true) return generateSigningSecret();
  if (v === null) return current;
  return v === false || v === "" ? null : v;
}

/** Whether a body sets a secret (the answer then shows it). */
export function setsSecret(b: { signing_secret?: boolean | string | null | undefined }): boolean {
  return (
    b.signing_secret === true || (typeof b.signing_secret === "string" && b.signing_secret !== "")
  );
}

const blankToNull = (v: string | null | undefined) => (v === "" ? null : v);

/**
 * A POST or PUT body as the store takes it: every field, defaults filled in. `currentSecret`:
 * the PUT's webhook's secret, kept by signing_secret null.
 */
export function newWebhook(b: WebhookInput, currentSecret: string | null = null): NewWebhook {
  return {
    endpoint: b.endpoint,
    authHeader: blankToNull(b.auth_header) ?? null,
    authKey: blankToNull(b.auth_key) ?? null,
    event: b.event ?? "MEASUREMENT",
    postAsArray: b.post_as_array ?? false,
    enabledByDefault: b.enabled_by_default ?? true,
    signingSecret:
      b.signing_secret === undefined ? null : secretOf(b.signing_secret, currentSecret),
  };
}

/** A PATCH body as the store takes it: only the fields sent. */
export function webhookPatch(b: WebhookPatchInput): WebhookPatch {
  const patch: { -readonly [K in keyof WebhookPatch]: WebhookPatch[K] } = {};
  if (b.endpoint !== undefined) patch.endpoint = b.endpoint;
  if (b.auth_header !== undefined) patch.authHeader = blankToNull(b.auth_header);
  if (b.auth_key !== undefined) patch.authKey = blankToNull(b.auth_key);
  if (b.event !== undefined) patch.event = b.event;
  if (b.post_as_array !== undefined) patch.postAsArray = b.post_as_array;
  if (b.enabled_by_default !== undefined) patch.enabledByDefault = b.enabled_by_default;
  // null keeps the secret: leaving signingSecret out of the patch does.
  if (b.signing_secret !== undefined && b.signing_secret !== null) {
    patch.signingSecret = secretOf(b.signing_secret, null);
  }
  return patch;
}
