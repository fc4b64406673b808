import type { Kysely } from "kysely";
import type { Dialect } from "../dialect.ts";

/**
 * A pending delivery says whether its next_attempt_at is a dispatcher's claim (when the claim
 * lapses) or a due time (the first attempt's, a retry's): the log shows a claimed one as in
 * flight, with no next attempt, rather than a lapse time that is no attempt's.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>, d: Dialect): Promise<void> {
  await db.schema
    .alterTable("webhook_deliveries")
    .addColumn("claimed", d.bool, (c) => c.notNull().defaultTo(d.toBool(false)))
    .execute();
}
