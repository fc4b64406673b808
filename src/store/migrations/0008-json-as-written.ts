import { type Kysely, sql } from "kysely";
import type { Dialect } from "../dialect.ts";

/** Every JSON column of migrations 0001–0007, by table. */
const JSON_COLUMNS: readonly (readonly [string, string])[] = [
  ["gateways", "properties"],
  ["measurements", "filter_params"],
  ["devices", "meta_data"],
  ["replacements", "device_types"],
  ["webhook_outbox", "payload"],
  ["webhook_deliveries", "measurement_ids"],
];

/**
 * PostgreSQL: JSON columns as `json`, which keeps the text as written, not `jsonb`, which
 * reorders an object's keys (shortest first). The webhook outbox's payloads became delivery
 * bodies with keys in another order than on SQLite — `{"action", "patient", "timestamp", …}`
 * against `{"action", "patient_id", …, "patient"}` — so a body compared byte for byte, or a
 * golden file, differed by store. Nothing queries inside these columns. SQLite keeps text.
 * (New schemas already make them `json`: dialect.ts.)
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>, d: Dialect): Promise<void> {
  if (d.kind !== "postgres") return;
  for (const [table, column] of JSON_COLUMNS) {
    await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} type json using ${sql.ref(column)}::json`.execute(
      db,
    );
  }
}
