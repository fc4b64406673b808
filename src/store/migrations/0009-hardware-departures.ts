import { type Kysely, sql } from "kysely";

/**
 * Ingestion gives a late reading to the device that held its gateway slot or IMEI when it was
 * taken (src/ingest/resolve.ts): it asks, for each batch, which devices left the batch's
 * hardware since its oldest reading. previous_hardware_uuid_lc (as devices.hardware_uuid_lc)
 * with the log's time answers that from an index, whatever the log's size; and
 * previous_patient_external_id keeps the patient the device had there (spec 6.2: patient_id
 * stable across unlinking, even when the device goes to another patient after). Entries logged
 * before this migration have none.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("hardware_logs")
    .addColumn("previous_hardware_uuid_lc", "text")
    .execute();
  await db.schema
    .alterTable("hardware_logs")
    .addColumn("previous_patient_external_id", "text")
    .execute();
  await db
    .updateTable("hardware_logs")
    .set({ previous_hardware_uuid_lc: sql`lower(previous_hardware_uuid)` })
    .where("previous_hardware_uuid", "is not", null)
    .execute();
  await db.schema
    .createIndex("hardware_logs_departures")
    .on("hardware_logs")
    .columns(["previous_hardware_uuid_lc", "created"])
    .execute();
}
