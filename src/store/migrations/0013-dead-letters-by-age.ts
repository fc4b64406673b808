import type { Kysely } from "kysely";

/**
 * Dead letters are kept for a while, not forever (src/ingest/retention.ts): the hourly sweep
 * finds the old ones by their time of receipt, as the `since`/`until` filters do.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("dead_letters_received")
    .on("dead_letters")
    .column("received")
    .execute();
}
