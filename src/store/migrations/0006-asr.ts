import { type Kysely, sql } from "kysely";
import type { Dialect } from "../dialect.ts";

/**
 * The ASR module (spec 1.4, 2.7, 4.5): supply requests with their shipping timeline (pending →
 * fulfilled → delivered, one scheduled next step each, so a restart re-arms them), the offsets
 * a client's PUT of estimated_strips_remaining leaves on a glucometer's strip count (kept by
 * device: it stays with the meter when its gateway is replaced), and each account's
 * automatic-reorder thresholds.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>, d: Dialect): Promise<void> {
  await db.schema
    .createTable("supply_requests")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("supply_type_id", "text", (c) => c.notNull())
    .addColumn("supply_name", "text", (c) => c.notNull())
    .addColumn("gateway_id", "text")
    .addColumn("imei", "text")
    // gateway_id or imei as the devices table spells it: what strip counts are keyed by.
    .addColumn("hardware_uuid", "text")
    .addColumn("related_device_id", "text")
    // The device the supply is for (the related device, or the one on the hardware it fits):
    // a glucometer's strip count follows its own orders, whatever gateway it is on.
    .addColumn("for_device_id", "text")
    .addColumn("patient_external_id", "text")
    .addColumn("shipping_name", "text", (c) => c.notNull())
    .addColumn("shipping_address", "text", (c) => c.notNull())
    .addColumn("shipping_city", "text", (c) => c.notNull())
    .addColumn("shipping_state", "text", (c) => c.notNull())
    .addColumn("shipping_zip_code", "text", (c) => c.notNull())
    .addColumn("notify_emails", "text")
    .addColumn("origin", "text", (c) =>
      c.notNull().check(sql`origin in ('client', 'auto_reorder')`),
    )
    .addColumn("strips", "integer")
    // The prices when ordered: a later catalogue change does not rewrite a past bill.
    .addColumn("up_front_cost", "text", (c) => c.notNull())
    .addColumn("shipping_cost", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'fulfilled')`))
    .addColumn("step", "integer", (c) => c.notNull())
    .addColumn("next_at", d.ms)
    .addColumn("carrier", "text")
    .addColumn("tracking_number", "text")
    .addColumn("tracking_link", "text")
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .addColumn("shipped_on", d.ms)
    .addColumn("delivered_on", d.ms)
    .execute();
  await db.schema
    .createIndex("supply_requests_list")
    .on("supply_requests")
    .columns(["account_id", "created", "id"])
    .execute();
  await db.schema
    .createIndex("supply_requests_due")
    .on("supply_requests")
    .columns(["next_at", "id"])
    .execute();
  await db.schema
    .createIndex("supply_requests_device")
    .on("supply_requests")
    .columns(["account_id", "for_device_id"])
    .execute();

  await db.schema
    .createTable("glucometer_supply_offsets")
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("device_id", "text", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    // bigint: the offset is the value sent (≤ 2^31 - 1) minus a count that may be negative.
    .addColumn("strips_offset", "bigint", (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .addPrimaryKeyConstraint("glucometer_supply_offsets_pk", ["account_id", "device_id"])
    .execute();

  await db.schema
    .createTable("asr_settings")
    .addColumn("account_id", "text", (c) =>
      c.primaryKey().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("strips_below", "integer")
    .addColumn("days_below", "integer")
    .addColumn("supply_name", "text", (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .execute();
}
