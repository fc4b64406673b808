import type { Kysely } from "kysely";
import type { Dialect } from "../dialect.ts";

/**
 * README "Dead letters": a dead letter replayed through ingestion must store nothing when its
 * message id was already ingested (DESIGN "Uplink"), yet an uplink dead-lettered for a reading
 * the lab could not resolve took its message-id claim in the same transaction. `holds_claim`
 * says the claim is this dead letter's own, so its replay may use it; rows from before this
 * migration never held one as far as a replay knows (false: the replay claims like new).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>, d: Dialect): Promise<void> {
  await db.schema
    .alterTable("dead_letters")
    .addColumn("holds_claim", d.bool, (c) => c.notNull().defaultTo(d.toBool(false)))
    .execute();
}
