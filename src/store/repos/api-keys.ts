import type { Selectable } from "kysely";
import { generateApiKey, hashApiKey, keyEnvironment, sameHash } from "../api-key-secret.ts";
import { type Ctx, notFound } from "../context.ts";
import { readNum, readNumOrNull } from "../dialect.ts";
import type { ApiKeysTable } from "../schema.ts";
import type { ApiKeysRepo } from "../store.ts";
import type { ApiKeyRow, Environment } from "../types.ts";
import { toAccountRow } from "./accounts.ts";

function toApiKeyRow(r: Selectable<ApiKeysTable>): ApiKeyRow {
  return {
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    prefix: r.prefix,
    environment: r.environment as Environment,
    created: readNum(r.created),
    revokedAt: readNumOrNull(r.revoked_at),
  };
}

/** Keys are shown once, stored hashed, listed by prefix (issue text; wire-formats "Auth"). */
export function apiKeysRepo(ctx: Ctx): ApiKeysRepo {
  const { db } = ctx;
  return {
    async create(accountId, input) {
      const account = await db
        .selectFrom("accounts")
        .select("environment")
        .where("id", "=", accountId)
        .executeTakeFirst();
      if (account === undefined) throw notFound("account", { id: accountId });
      const secret = generateApiKey(account.environment as Environment);
      const r = await db
        .insertInto("api_keys")
        .values({
          id: ctx.ids.uuid(),
          account_id: accountId,
          name: input?.name ?? null,
          prefix: secret.prefix,
          key_hash: secret.hash,
          environment: account.environment,
          created: ctx.clock.now(),
          revoked_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { key: secret.key, apiKey: toApiKeyRow(r) };
    },
    async list(accountId) {
      const rows = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("account_id", "=", accountId)
        .orderBy("created")
        .orderBy("id")
        .execute();
      return rows.map(toApiKeyRow);
    },
    async verify(key) {
      const environment = keyEnvironment(key);
      if (environment === undefined) return null;
      const hash = hashApiKey(key);
      // The index lookup compares hashes, not the key: timing can at most reveal how much of a
      // SHA-256 an attacker's guess shares with a stored one, which says nothing about any key.
      // The final comparison is constant-time anyway.
      const r = await db
        .selectFrom("api_keys")
        .innerJoin("accounts", "accounts.id", "api_keys.account_id")
        .selectAll("accounts")
        .select([
          "api_keys.id as key_id",
          "api_keys.name as key_name",
          "api_keys.prefix as key_prefix",
          "api_keys.key_hash as key_hash",
          "api_keys.environment as key_environment",
          "api_keys.created as key_created",
          "api_keys.revoked_at as key_revoked_at",
        ])
        .where("api_keys.key_hash", "=", hash)
        .executeTakeFirst();
      if (r === undefined || !sameHash(r.key_hash, hash)) return null;
      if (r.key_revoked_at !== null || r.key_environment !== environment) return null;
      return {
        account: toAccountRow(r),
        apiKey: toApiKeyRow({
          id: r.key_id,
          account_id: r.id,
          name: r.key_name,
          prefix: r.key_prefix,
          key_hash: r.key_hash,
          environment: r.key_environment,
          created: r.key_created,
          revoked_at: r.key_revoked_at,
        }),
      };
    },
    async revoke(accountId, keyId) {
      const result = await db
        .updateTable("api_keys")
        .set({ revoked_at: ctx.clock.now() })
        .where("id", "=", keyId)
        .where("account_id", "=", accountId)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}
