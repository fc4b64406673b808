import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { RpmlabError } from "../core/errors.ts";
import type { Store } from "../store/store.ts";
import type { AccountRow } from "../store/types.ts";
import { apiError, DRF } from "./errors.ts";
import type { ClientAuth, Scope } from "./types.ts";

/**
 * Authentication (spec 5; wire-formats "Auth and transport behaviour").
 *
 * Client scopes take `Authorization: Api-Key <key>`, the scheme spelled exactly so. 401 when the
 * header is missing, of another scheme or spelling, or the key is unknown, malformed or revoked.
 * 403 when the key is valid but the path is not its account's:
 * - another client domain, or one that does not exist: 403 too (spec 5.5 allows any 4xx), so
 *   "wrong client domain" is one check for a client whatever the domain;
 * - environments (spec 5.2): an account is one environment, development or production, and its
 *   keys carry it (`rpm_dev_…`, `rpm_prod_…`). A team has one account per environment, each
 *   with its own client domain; a key used on the domain of another environment gets a 403
 *   saying so, e.g. a development key on the production domain.
 * The ASR scope also needs the account's ASR module (spec 1.4, 4.5): 403 otherwise.
 * The v2 scope (/api/v2/hwi/, spec 4.4) has no client domain: the key's account is used.
 */

const SCHEME = "Api-Key";

export async function authenticateClient(
  store: Store,
  scope: Exclude<Scope, "lab">,
  authorization: string | undefined,
  clientDomain: string | undefined,
): Promise<ClientAuth> {
  const key = apiKeyOf(authorization);
  const verified = await store.apiKeys.verify(key);
  if (verified === null) {
    throw apiError.unauthenticated("Invalid API key: it is unknown, revoked or malformed.");
  }
  const account =
    scope === "v2" ? verified.account : await pathAccount(store, verified.account, clientDomain);
  if (verified.apiKey.environment !== account.environment) {
    throw environmentMismatch(verified.apiKey.environment, verified.account, account);
  }
  if (scope === "asr" && !account.asrEnabled) {
    throw apiError.forbidden(
      "The ASR module is not enabled for this account. Ask your account representative to enable it.",
    );
  }
  return { account, apiKey: verified.apiKey };
}

/** What a scheme name looks like (Bearer, Token, Basic…): only such a word is quoted back. */
const SCHEME_TOKEN = /^[A-Za-z][A-Za-z0-9-]{0,19}$/;

/** The key of an `Api-Key <key>` header, or the 401 that explains what is wrong with it. */
function apiKeyOf(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === "") {
    throw apiError.unauthenticated(DRF.notAuthenticated);
  }
  const space = authorization.indexOf(" ");
  if (space < 0 && authorization !== SCHEME) {
    // Never quoted back: a value with no scheme is most likely the key itself.
    throw apiError.unauthenticated(
      `Invalid Authorization header: no scheme; expected "${SCHEME} <key>".`,
    );
  }
  const scheme = space < 0 ? authorization : authorization.slice(0, space);
  const key = space < 0 ? "" : authorization.slice(space + 1);
  if (scheme !== SCHEME) {
    const named = SCHEME_TOKEN.test(scheme) ? `the "${scheme}" scheme` : "another scheme";
    const hint =
      scheme.toLowerCase() === SCHEME.toLowerCase()
        ? `the scheme is case-sensitive: write "${SCHEME}", not "${scheme}"`
        : `expected "${SCHEME} <key>", got ${named}`;
    throw apiError.unauthenticated(`Invalid Authorization header: ${hint}.`);
  }
  if (key === "") {
    throw apiError.unauthenticated(`Invalid Authorization header: no key after "${SCHEME}".`);
  }
  return key;
}

async function pathAccount(
  store: Store,
  keyAccount: AccountRow,
  clientDomain: string | undefined,
): Promise<AccountRow> {
  const domain = clientDomain ?? "";
  // Before the lookup: PostgreSQL text cannot hold a NUL, and its error is no answer.
  if (domain.includes("\u0000")) throw apiError.badRequest(DRF.nullInUrl);
  // The usual case, the key's own domain (matched ignoring case, spec 5.3): no second lookup.
  if (domain.toLowerCase() === keyAccount.clientDomain.toLowerCase()) return keyAccount;
  const account = await store.accounts.getByClientDomain(domain);
  if (account === null) {
    throw apiError.forbidden(
      `Client domain "${domain}" does not exist; this API key belongs to client domain "${keyAccount.clientDomain}".`,
    );
  }
  if (account.id === keyAccount.id) return account;
  if (account.environment !== keyAccount.environment) {
    throw environmentMismatch(keyAccount.environment, keyAccount, account);
  }
  throw apiError.forbidden(
    `This API key belongs to client domain "${keyAccount.clientDomain}", not "${account.clientDomain}".`,
  );
}

function environmentMismatch(keyEnv: string, keyAccount: AccountRow, account: AccountRow) {
  return apiError.forbidden(
    `This API key is a ${keyEnv} key (client domain "${keyAccount.clientDomain}"); client domain "${account.clientDomain}" is a ${account.environment} account. Keys of different environments are not interchangeable.`,
  );
}

/**
 * The lab admin API (/lab/v1/) takes `Authorization: Bearer <admin token>`: 401 without it or
 * with a wrong token, 403 for an API key (a client credential, refused here by design).
 */
export function authenticateAdmin(authorization: string | undefined, adminToken: string): void {
  if (authorization === undefined || authorization.trim() === "") {
    throw apiError.unauthenticated(DRF.notAuthenticated, "Bearer");
  }
  const [scheme = "", token = ""] = authorization.split(/ (.*)/s);
  if (scheme === SCHEME) {
    throw apiError.forbidden(
      "The lab admin API takes the admin token (Authorization: Bearer <token>), not an API key.",
    );
  }
  if (scheme.toLowerCase() !== "bearer") {
    throw apiError.unauthenticated(
      'Invalid Authorization header: expected "Bearer <admin token>".',
      "Bearer",
    );
  }
  if (!sameSecret(token, adminToken))
    throw apiError.unauthenticated("Invalid admin token.", "Bearer");
}

/** Constant-time comparison of two secrets of any length (through their SHA-256). */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** The client domain of a `/clients/<domain>/…` path, for requests no route matched. */
export function clientDomainOf(path: string): string | undefined {
  const m = /^\/clients\/([^/]+)\//.exec(path);
  if (m === null) return undefined;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1];
  }
}

/** Runs the scope's authentication for `request`; sets request.client on client scopes. */
export async function authenticate(
  request: FastifyRequest,
  scope: Scope,
  deps: { store: Store; adminToken: string },
  clientDomain: string | undefined,
): Promise<void> {
  const authorization = request.headers.authorization;
  if (scope === "lab") {
    authenticateAdmin(authorization, deps.adminToken);
    return;
  }
  request.client = await authenticateClient(deps.store, scope, authorization, clientDomain);
}

/** The authenticated account of a client-scope request (hwi, asr, v2). */
export function accountOf(request: FastifyRequest): AccountRow {
  if (request.client === null) {
    throw new RpmlabError("E_USAGE", `route ${request.routeOptions.url} is outside a client scope`);
  }
  return request.client.account;
}
