import type { Kysely } from "kysely";

/**
 * A delivery counts the attempts a user asked for (resends) apart from the automatic ones: the
 * backoff doubles per automatic failure only (src/webhooks/attempt.ts), so resends by hand never
 * push a pending delivery's next attempt further away.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("webhook_deliveries")
    .addColumn("manual_attempts", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}
