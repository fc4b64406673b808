import { type Kysely, sql } from "kysely";
import type { Dialect } from "../dialect.ts";

/**
 * The dedupe key's time is the device's own stamp (device_timestamp), not the stored timestamp:
 * a reading taken with an unset clock is stored at the gateway's receive time, and keyed by
 * that it was a new reading each time it was re-sent — and the readings of one visit, all
 * received at one time, were one. Existing rows keep their timestamp as their key.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>, d: Dialect): Promise<void> {
  await db.schema.alterTable("measurements").addColumn("device_timestamp", d.ms).execute();
  await db.updateTable("measurements").set({ device_timestamp: sql`timestamp` }).execute();
  await db.schema
    .createIndex("measurements_dedupe_device")
    .on("measurements")
    .columns(["source", "metric", "device_timestamp", "dedupe_index"])
    .unique()
    .execute();
  await db.schema.dropIndex("measurements_dedupe").execute();
}
