import { z } from "zod";
import { ENVIRONMENTS } from "../../app/accounts.ts";
import { CLIENT_DOMAIN_PATTERN } from "../../config/client-domain.ts";
import { booleanField, charField, choiceField, drfObject } from "../../core/drf-fields.ts";
import { toJsonSchema } from "../json-schema.ts";

/** Wire schemas of the lab admin API (/lab/v1/): accounts and keys. */

const environment = choiceField(ENVIRONMENTS as [string, ...string[]]);

export const AccountBody = drfObject({
  client_domain: charField({ maxLength: 64 })
    .refine((v) => CLIENT_DOMAIN_PATTERN.test(v), {
      error: "Letters, digits, dots and hyphens, starting and ending with a letter or digit.",
    })
    // The refinement is checked, not documented: the pattern goes into the OpenAPI document.
    .meta({ pattern: CLIENT_DOMAIN_PATTERN.source })
    .describe("The account's client domain: the {clientDomain} of its URLs (spec 5.3)."),
  environment: environment
    .optional()
    .describe("development (default) or production (spec 5.2): the environment of its keys."),
  asr_enabled: booleanField().optional().describe("ASR module enabled (default false, spec 1.4)."),
});

export const AccountPatchBody = drfObject({
  asr_enabled: booleanField().optional().describe("Enable or disable the ASR module."),
  omit_status_metrics: booleanField()
    .optional()
    .describe(
      "true: battery and other status metrics are left out of measurement webhooks (spec 6.3.3).",
    ),
});

export const KeyBody = drfObject({
  name: charField({ allowBlank: true })
    .nullable()
    .optional()
    .describe("A label to tell keys apart in listings."),
});

export const DomainParams = z.object({ clientDomain: z.string() });
export const KeyParams = z.object({
  clientDomain: z.string(),
  key: z.string().describe("The key's id, its listed prefix, or the key itself."),
});

const iso = () => z.string().describe("ISO 8601 UTC with microseconds.");

export const AccountOut = z.object({
  id: z.string(),
  client_domain: z.string(),
  environment: z.string(),
  asr_enabled: z.boolean(),
  omit_status_metrics: z
    .boolean()
    .describe(
      "Battery and other status metrics (the catalogue's category status) are left out of measurement webhooks (spec 6.3.3).",
    ),
  created: iso(),
  modified: iso(),
});

export const KeyOut = z.object({
  id: z.string(),
  name: z.string().nullable(),
  prefix: z.string().describe("How the key starts (rpm_dev_… or rpm_prod_…), to recognise it."),
  environment: z.string(),
  created: iso(),
  revoked_at: iso().nullable(),
});

export const CreatedKeyOut = KeyOut.extend({
  key: z.string().describe("The API key. Shown in this response only: store it now."),
});

export const ACCOUNT_JSON = toJsonSchema(AccountOut);
export const ACCOUNTS_JSON = toJsonSchema(z.array(AccountOut));
export const KEY_JSON = toJsonSchema(KeyOut);
export const KEYS_JSON = toJsonSchema(z.array(KeyOut));
export const CREATED_KEY_JSON = toJsonSchema(CreatedKeyOut);
