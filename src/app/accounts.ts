import { CLIENT_DOMAIN_PATTERN, CLIENT_DOMAIN_RULE } from "../config/client-domain.ts";
import { RpmlabError } from "../core/errors.ts";
import { toIsoMicros } from "../core/time.ts";
import { keyEnvironment, keyPrefix, maskApiKeys, PREFIX_REF } from "../store/api-key-secret.ts";
import type { Store } from "../store/store.ts";
import type { AccountRow, ApiKeyRow, CreatedApiKey, Environment } from "../store/types.ts";

/**
 * Accounts and API keys (issue "Accounts, keys, admin"): what the vendor's web dashboard does,
 * shared by the lab admin API (/lab/v1/) and the CLI (`rpmlab accounts`, `rpmlab keys`).
 */

export const ENVIRONMENTS: readonly Environment[] = ["development", "production"];

export interface NewAccountInput {
  readonly clientDomain: string;
  readonly environment?: Environment;
  readonly asrEnabled?: boolean;
}

export async function createAccount(store: Store, input: NewAccountInput): Promise<AccountRow> {
  if (!CLIENT_DOMAIN_PATTERN.test(input.clientDomain)) {
    throw new RpmlabError(
      "E_STORE_INVALID",
      `client domain "${input.clientDomain}" must be ${CLIENT_DOMAIN_RULE}`,
      { field: "client_domain", value: input.clientDomain },
    );
  }
  return store.accounts.create({
    clientDomain: input.clientDomain,
    environment: input.environment ?? "development",
    asrEnabled: input.asrEnabled ?? false,
  });
}

/** The account of a client domain (ignoring case), or E_STORE_NOT_FOUND. */
export async function findAccount(store: Store, clientDomain: string): Promise<AccountRow> {
  const account = await store.accounts.getByClientDomain(clientDomain);
  if (account === null) {
    throw new RpmlabError("E_STORE_NOT_FOUND", `no account has client domain "${clientDomain}"`, {
      field: "client_domain",
      value: clientDomain,
    });
  }
  return account;
}

/** Spec 1.4: the ASR module is enabled per account by the account representative. */
export async function setAsrEnabled(
  store: Store,
  clientDomain: string,
  enabled: boolean,
): Promise<AccountRow> {
  const account = await findAccount(store, clientDomain);
  return store.accounts.update(account.id, { asrEnabled: enabled });
}

/**
 * Spec 6.3.3: battery and other status data left out of outbound webhook payloads — "enabled on
 * request through the customer success manager"; here, the lab admin API and `rpmlab accounts`.
 */
export async function setOmitStatusMetrics(
  store: Store,
  clientDomain: string,
  omit: boolean,
): Promise<AccountRow> {
  const account = await findAccount(store, clientDomain);
  return store.accounts.update(account.id, { omitStatusMetrics: omit });
}

/** A new key of the account's environment; the plain key is in the result only. */
export async function createKey(
  store: Store,
  clientDomain: string,
  name?: string | null,
): Promise<CreatedApiKey & { account: AccountRow }> {
  const account = await findAccount(store, clientDomain);
  const created = await store.apiKeys.create(account.id, { name: name ?? null });
  return { ...created, account };
}

export async function listKeys(store: Store, clientDomain: string): Promise<ApiKeyRow[]> {
  return store.apiKeys.list((await findAccount(store, clientDomain)).id);
}

/**
 * Revokes the key named by its id, its listed prefix (`rpm_dev_AbCd1234`, with or without the
 * `rpm_…_` tag; a tag must be the key's environment) or the key itself (checked against its
 * hash: a string that only starts like a key names none). Revoking a revoked key changes nothing
 * and says so.
 */
export async function revokeKey(
  store: Store,
  clientDomain: string,
  ref: string,
): Promise<{ apiKey: ApiKeyRow; alreadyRevoked: boolean }> {
  const account = await findAccount(store, clientDomain);
  const keys = await store.apiKeys.list(account.id);
  const matches = await keysNamed(store, account.id, keys, ref.trim());
  if (matches.length > 1) {
    throw new RpmlabError("E_USAGE", `"${ref}" names ${matches.length} keys: give the key id`, {
      field: "key",
    });
  }
  const key = matches[0];
  if (key === undefined) {
    // A whole key given to the wrong account is still a live key: quoted by its prefix only,
    // as listings show it, since this message reaches a terminal, a CI log or an HTTP answer.
    const named = maskApiKeys(ref);
    throw new RpmlabError(
      "E_STORE_NOT_FOUND",
      `client domain "${account.clientDomain}" has no key "${named}"`,
      { field: "key", value: named },
    );
  }
  if (key.revokedAt !== null) return { apiKey: key, alreadyRevoked: true };
  await store.apiKeys.revoke(account.id, key.id);
  const revoked = (await store.apiKeys.list(account.id)).find((k) => k.id === key.id) ?? key;
  return { apiKey: revoked, alreadyRevoked: false };
}

async function keysNamed(
  store: Store,
  accountId: string,
  keys: readonly ApiKeyRow[],
  ref: string,
): Promise<ApiKeyRow[]> {
  const byId = keys.filter((k) => k.id === ref);
  if (byId.length > 0) return byId;
  const environment = keyEnvironment(ref);
  if (environment !== undefined) {
    const live = await store.apiKeys.verify(ref);
    if (live !== null) return live.account.id === accountId ? [live.apiKey] : [];
    // A revoked key no longer verifies; one of its prefix and environment is taken as it
    // (revoking it again changes nothing).
    const prefix = keyPrefix(ref);
    return keys.filter(
      (k) => k.revokedAt !== null && k.prefix === prefix && k.environment === environment,
    );
  }
  const m = PREFIX_REF.exec(ref);
  if (m === null) return [];
  const tagged = m[1] === undefined ? undefined : m[1] === "prod" ? "production" : "development";
  return keys.filter(
    (k) => k.prefix === m[2] && (tagged === undefined || k.environment === tagged),
  );
}

/** How listings show a key: its tag and prefix, e.g. `rpm_dev_AbCd1234…`. */
export function displayPrefix(key: ApiKeyRow): string {
  return `rpm_${key.environment === "production" ? "prod" : "dev"}_${key.prefix}`;
}

/** The wire form of an account (lab admin API, `--json`). */
export function accountJson(a: AccountRow) {
  return {
    id: a.id,
    client_domain: a.clientDomain,
    environment: a.environment,
    asr_enabled: a.asrEnabled,
    omit_status_metrics: a.omitStatusMetrics,
    created: toIsoMicros(a.created),
    modified: toIsoMicros(a.modified),
  };
}

/** The wire form of a key, never with the key itself. */
export function keyJson(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    prefix: displayPrefix(k),
    environment: k.environment,
    created: toIsoMicros(k.created),
    revoked_at: k.revokedAt === null ? null : toIsoMicros(k.revokedAt),
  };
}

export type AccountJson = ReturnType<typeof accountJson>;
export type KeyJson = ReturnType<typeof keyJson>;

/** Shown with every new key, by the CLI and in the admin API's docs. */
export const KEY_SHOWN_ONCE =
  "Store this key now: it is not shown again (only its hash is kept; listings show its prefix).";

/** An environment as a flag gives it: development or production (dev, prod for short). */
export function parseEnvironment(text: string): Environment {
  const value = text.trim().toLowerCase();
  if (value === "development" || value === "dev") return "development";
  if (value === "production" || value === "prod") return "production";
  throw new RpmlabError(
    "E_CONFIG_INVALID",
    `--environment must be development or production (or dev, prod), got "${text}"`,
    { field: "environment", value: text },
  );
}
