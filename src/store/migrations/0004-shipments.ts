import { type Kysely, sql } from "kysely";
import type { Dialect } from "../dialect.ts";

/**
 * The fulfilment simulator (issue 4 §2): shipments with their scheduled next transition (so a
 * restart re-arms every pending one), their carrier history, billable periods of devices, and
 * the special-order dates of replacements (spec 6.2: created_on, updated_on, shipped_on,
 * delivered_on).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>, d: Dialect): Promise<void> {
  const autoId = () =>
    [
      "id",
      d.autoIdType,
      // biome-ignore lint/suspicious/noExplicitAny: column builder callback shared by both dialects.
      (c: any) =>
        d.kind === "sqlite"
          ? c.primaryKey().autoIncrement()
          : c.primaryKey().generatedByDefaultAsIdentity(),
    ] as const;

  await db.schema
    .createTable("shipments")
    // The order's id: the hwi_device_id of a request, the replacement's id of a replacement.
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('device', 'replacement')`))
    // Spec 3 Cancelled: the pending order is removed, and its shipment with it.
    .addColumn("device_id", "text", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("replacement_id", "text", (c) => c.references("replacements.id").onDelete("cascade"))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("require_signature", d.bool, (c) => c.notNull())
    .addColumn("ship_gateway_only", d.bool, (c) => c.notNull())
    .addColumn("delivery_type", "text")
    .addColumn("ships_device", d.bool)
    .addColumn("ships_gateway", d.bool)
    .addColumn("hardware_uuid", "text")
    .addColumn("carrier", "text")
    .addColumn("tracking_number", "text")
    .addColumn("tracking_link", "text")
    .addColumn("step", "integer", (c) => c.notNull())
    .addColumn("scans_planned", "integer", (c) => c.notNull())
    .addColumn("scans_done", "integer", (c) => c.notNull())
    .addColumn("transit_ms", d.ms, (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("next_status", "text")
    .addColumn("next_at", d.ms)
    .addColumn("expected_delivery", d.ms)
    .addColumn("shipped_on", d.ms)
    .addColumn("delivered_on", d.ms)
    .addColumn("delivered_via", "text")
    .addColumn("signed_by", "text")
    .addColumn("halted", "text")
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .execute();
  // The simulator's re-arm at start, and the admin listing.
  await db.schema.createIndex("shipments_due").on("shipments").columns(["next_at", "id"]).execute();
  await db.schema
    .createIndex("shipments_list")
    .on("shipments")
    .columns(["account_id", "created", "id"])
    .execute();

  await db.schema
    .createTable("shipment_events")
    .addColumn(...autoId())
    .addColumn("shipment_id", "text", (c) =>
      c.notNull().references("shipments.id").onDelete("cascade"),
    )
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("at", d.ms, (c) => c.notNull())
    .addColumn("detail", "text", (c) => c.notNull())
    .addColumn("location", "text")
    .execute();
  await db.schema
    .createIndex("shipment_events_list")
    .on("shipment_events")
    .columns(["shipment_id", "id"])
    .execute();

  await db.schema
    .createTable("billing_periods")
    .addColumn(...autoId())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    // No foreign key: what was billed outlives the device record.
    .addColumn("device_id", "text", (c) => c.notNull())
    .addColumn("started", d.ms, (c) => c.notNull())
    .addColumn("ended", d.ms)
    .addColumn("basis", "text", (c) =>
      c.notNull().check(sql`basis in ('activation', 'delivery', 'pickup')`),
    )
    .execute();
  await db.schema
    .createIndex("billing_periods_list")
    .on("billing_periods")
    .columns(["account_id", "started", "id"])
    .execute();
  await db.schema
    .createIndex("billing_periods_device")
    .on("billing_periods")
    .columns(["device_id", "ended"])
    .execute();

  for (const column of ["shipped_on", "delivered_on"]) {
    await db.schema.alterTable("replacements").addColumn(column, d.ms).execute();
  }
  await db.schema.alterTable("replacements").addColumn("tracking_link", "text").execute();
}
