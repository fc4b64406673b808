import { type Kysely, sql } from "kysely";
import type { Dialect } from "../dialect.ts";

// biome-ignore lint/suspicious/noExplicitAny: see up().
export type AutoIdColumn = (name?: string) => readonly [string, any, (c: any) => any];

export async function createHardwareTables(
  // biome-ignore lint/suspicious/noExplicitAny: see up().
  db: Kysely<any>,
  d: Dialect,
  autoId: AutoIdColumn,
): Promise<void> {
  await db.schema
    .createTable("gateways")
    .addColumn(...autoId())
    .addColumn("gateway_uuid", "text", (c) => c.notNull())
    // Spec 4.2: gateway-info matches the uuid case-insensitively.
    .addColumn("gateway_uuid_lc", "text", (c) => c.notNull().unique())
    // Null until associated with an account (spec 4.2 gateway-info 404).
    .addColumn("account_id", "text", (c) => c.references("accounts.id").onDelete("set null"))
    .addColumn("last_signal_strength", "integer", (c) =>
      c.notNull().check(sql`last_signal_strength between 0 and 30`),
    )
    .addColumn("last_measurement", d.ms)
    .addColumn("last_checkin_time", d.ms)
    .addColumn("shipped_on", d.ms)
    .addColumn("assigned_on", d.ms)
    .addColumn("firmware_version", "text")
    .addColumn("bootloader_version", "text")
    .addColumn("provisioned", d.bool, (c) => c.notNull())
    .addColumn("properties", d.json, (c) => c.notNull())
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("gateways_account")
    .on("gateways")
    .columns(["account_id", "gateway_uuid_lc"])
    .execute();

  await db.schema
    .createTable("gateway_whitelist")
    .addColumn("gateway_id", d.autoIdType, (c) =>
      c.notNull().references("gateways.id").onDelete("cascade"),
    )
    .addColumn("mac_address", "text", (c) => c.notNull())
    .addColumn("sensor_code", "text", (c) => c.notNull())
    .addColumn("whitelist_status", "text", (c) =>
      c.notNull().check(sql`whitelist_status in ('RE', 'CO')`),
    )
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .addPrimaryKeyConstraint("gateway_whitelist_pk", ["gateway_id", "mac_address"])
    .execute();

  await createMeasurementTables(db, d, autoId);
}

async function createMeasurementTables(
  // biome-ignore lint/suspicious/noExplicitAny: see up().
  db: Kysely<any>,
  d: Dialect,
  autoId: AutoIdColumn,
): Promise<void> {
  await db.schema
    .createTable("measurements")
    .addColumn(...autoId())
    .addColumn("account_id", "text", (c) => c.references("accounts.id").onDelete("cascade"))
    // No foreign key: measurements outlive a cancelled device record, like the real service's.
    .addColumn("device_id", "text")
    .addColumn("device_name", "text")
    .addColumn("patient_external_id", "text")
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("hardware_uuid", "text", (c) => c.notNull())
    .addColumn("sensor_code", "text")
    .addColumn("sensor_id", "text")
    .addColumn("metric", "text", (c) => c.notNull())
    .addColumn("value_1", d.double, (c) => c.notNull())
    .addColumn("value_2", d.double)
    .addColumn("timestamp", d.ms, (c) => c.notNull())
    .addColumn("timezone_offset", "integer", (c) => c.notNull())
    .addColumn("estimated_timestamp", d.bool, (c) => c.notNull())
    .addColumn("filter_params", d.json)
    .addColumn("measurement_index", d.ms)
    .addColumn("device_log_index", d.ms)
    .addColumn("dedupe_index", d.ms, (c) => c.notNull())
    .addColumn("message_id", "text")
    .addColumn("characteristic_uuid", "text")
    .addColumn("raw", d.bytes)
    .addColumn("created", d.ms, (c) => c.notNull())
    .execute();
  // DESIGN "Uplink": re-sends and redeliveries store nothing twice.
  await db.schema
    .createIndex("measurements_dedupe")
    .on("measurements")
    .columns(["source", "metric", "timestamp", "dedupe_index"])
    .unique()
    .execute();
  // Spec 4.4 / wire-formats "Measurement queries": by device or by patient, always within the
  // account, ordered by (timestamp, id) — stable across equal timestamps and keyset-friendly.
  // metric and created trail the key, so metric__name and created__gte/__lt are checked inside
  // the index scan (counts are index-only) without reading table rows. Separate metric-first
  // and created-first indexes were measured to cost about a third of ingestion throughput.
  // account_id leads the device index too: with it, every device query's WHERE is in one index
  // and SQLite never mistakes the patient index for a better match when it has no statistics.
  const indexes: [string, string[]][] = [
    ["measurements_device", ["account_id", "device_id", "timestamp", "id", "metric", "created"]],
    [
      "measurements_patient",
      ["account_id", "patient_external_id", "timestamp", "id", "metric", "created"],
    ],
  ];
  for (const [name, columns] of indexes) {
    await db.schema.createIndex(name).on("measurements").columns(columns).execute();
  }
  // Orphan readings waiting for a device activation on their gateway.
  await db.schema
    .createIndex("measurements_orphans")
    .on("measurements")
    .columns(["hardware_uuid", "sensor_code"])
    .where(sql.ref("device_id"), "is", null)
    .execute();

  await db.schema
    .createTable("ingested_messages")
    .addColumn("message_id", "text", (c) => c.primaryKey())
    .addColumn("received", d.ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("webhooks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("endpoint", "text", (c) => c.notNull())
    .addColumn("auth_header", "text")
    .addColumn("auth_key", "text")
    .addColumn("event", "text", (c) =>
      c.notNull().check(sql`event in ('MEASUREMENT', 'FULFILLMENT', 'SPECIAL_ORDER', 'PATIENT')`),
    )
    .addColumn("post_as_array", d.bool, (c) => c.notNull())
    .addColumn("enabled_by_default", d.bool, (c) => c.notNull())
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("webhooks_list")
    .on("webhooks")
    .columns(["account_id", "created", "id"])
    .execute();

  await db.schema
    .createTable("dead_letters")
    .addColumn(...autoId())
    .addColumn("topic", "text", (c) => c.notNull())
    .addColumn("payload", d.bytes, (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("received", d.ms, (c) => c.notNull())
    .addColumn("message_id", "text")
    .execute();
}
