import type { Kysely } from "kysely";

/**
 * Message-id claims are kept for a while, not forever (src/ingest/claim-retention.ts): the
 * hourly sweep finds the old ones by their time of receipt.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("ingested_messages_received")
    .on("ingested_messages")
    .column("received")
    .execute();
}
