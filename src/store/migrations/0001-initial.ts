import { type Kysely, sql } from "kysely";
import type { Dialect } from "../dialect.ts";
import { createHardwareTables } from "./0001-initial-hardware.ts";

/**
 * The first schema, for both dialects (column kinds that differ come from the Dialect). Unique
 * keys carry the spec's rules; indexes serve the list queries of spec 4 and 8.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>, d: Dialect): Promise<void> {
  const autoId = (name = "id") =>
    [
      name,
      d.autoIdType,
      // biome-ignore lint/suspicious/noExplicitAny: column builder callback shared by both dialects.
      (c: any) =>
        d.kind === "sqlite"
          ? c.primaryKey().autoIncrement()
          : c.primaryKey().generatedByDefaultAsIdentity(),
    ] as const;

  await db.schema
    .createTable("store_meta")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "integer", (c) => c.notNull())
    .execute();
  await db.insertInto("store_meta").values({ key: "id_epoch", value: 0 }).execute();

  await db.schema
    .createTable("accounts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("client_domain", "text", (c) => c.notNull())
    // Spec 5.3: the client domain selects the account; unique whatever its case.
    .addColumn("client_domain_lc", "text", (c) => c.notNull().unique())
    .addColumn("environment", "text", (c) =>
      c.notNull().check(sql`environment in ('development', 'production')`),
    )
    .addColumn("asr_enabled", d.bool, (c) => c.notNull())
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("name", "text")
    .addColumn("prefix", "text", (c) => c.notNull())
    // SHA-256 hex of the key: verify() looks keys up by it.
    .addColumn("key_hash", "text", (c) => c.notNull().unique())
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("revoked_at", d.ms)
    .execute();
  await db.schema.createIndex("api_keys_account").on("api_keys").column("account_id").execute();

  await db.schema
    .createTable("patients")
    .addColumn(...autoId())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("external_id", "text", (c) => c.notNull())
    .addColumn("external_id_lc", "text", (c) => c.notNull())
    .addColumn("name", "text")
    .addColumn("address", "text")
    .addColumn("city", "text")
    .addColumn("state", "text")
    .addColumn("zip_code", "text")
    .addColumn("phone_number", "text")
    .addColumn("email", "text")
    .addColumn("physician", "text")
    .addColumn("clinic_name", "text")
    .addColumn("care_manager", "text")
    .addColumn("sms_opt_in", d.bool, (c) => c.notNull())
    .addColumn("confirm_address", d.bool, (c) => c.notNull())
    .addColumn("address_status", "text", (c) =>
      c.check(sql`address_status in ('Verified', 'Invalid')`),
    )
    .addColumn("address_verified_by", "text")
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    // Spec 2.1: unique across the account; lookups ignore case, so the key does too.
    .addUniqueConstraint("patients_external_id", ["account_id", "external_id_lc"])
    .execute();
  await db.schema
    .createIndex("patients_list")
    .on("patients")
    .columns(["account_id", "created", "id"])
    .execute();

  await db.schema
    .createTable("devices")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("sensor_code", "text")
    .addColumn("hardware_uuid", "text")
    .addColumn("hardware_uuid_lc", "text")
    .addColumn("sensor_id", "text")
    .addColumn("slot", "text", (c) => c.notNull())
    // Spec 4.1: deleting a patient leaves its devices active, without patient data.
    .addColumn("patient_id", d.autoIdType, (c) => c.references("patients.id").onDelete("set null"))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("require_signature", d.bool, (c) => c.notNull())
    .addColumn("ship_gateway_only", d.bool, (c) => c.notNull())
    .addColumn("meta_data", d.json)
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .execute();
  // Spec 2.8: one device per sensor code per gateway, several when their sensor ids differ.
  await db.schema
    .createIndex("devices_gateway_slot")
    .on("devices")
    .columns(["hardware_uuid_lc", "slot"])
    .unique()
    .where(sql.ref("hardware_uuid_lc"), "is not", null)
    .execute();
  await db.schema
    .createIndex("devices_list")
    .on("devices")
    .columns(["account_id", "created", "id"])
    .execute();
  await db.schema.createIndex("devices_patient").on("devices").column("patient_id").execute();
  await db.schema
    .createIndex("devices_status")
    .on("devices")
    .columns(["account_id", "status"])
    .execute();

  await db.schema
    .createTable("device_properties")
    .addColumn("device_id", "text", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .addPrimaryKeyConstraint("device_properties_pk", ["device_id", "key"])
    .execute();
  // properties__key/properties__value filters (spec 4.3): devices routed to one webhook.
  await db.schema
    .createIndex("device_properties_kv")
    .on("device_properties")
    .columns(["key", "value"])
    .execute();

  await db.schema
    .createTable("hardware_logs")
    .addColumn(...autoId())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    // No foreign key: the history outlives a deleted device.
    .addColumn("device_id", "text", (c) => c.notNull())
    .addColumn("previous_hardware_uuid", "text")
    .addColumn("hardware_uuid", "text")
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("created", d.ms, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("hardware_logs_list")
    .on("hardware_logs")
    .columns(["account_id", "device_id", "id"])
    .execute();

  await db.schema
    .createTable("replacements")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("device_id", "text", (c) => c.notNull())
    .addColumn("device_types", d.json, (c) => c.notNull())
    .addColumn("shipping_name", "text")
    .addColumn("shipping_address", "text")
    .addColumn("shipping_city", "text")
    .addColumn("shipping_state", "text")
    .addColumn("shipping_zip_code", "text")
    .addColumn("notify_emails", "text")
    .addColumn("previous_hardware_uuid", "text")
    .addColumn("new_hardware_uuid", "text")
    .addColumn("status", "text")
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("replacements_list")
    .on("replacements")
    .columns(["account_id", "created", "id"])
    .execute();

  await createHardwareTables(db, d, autoId);
}
