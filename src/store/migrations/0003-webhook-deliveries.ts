import { type Kysely, sql } from "kysely";
import type { Dialect } from "../dialect.ts";

/**
 * Webhook delivery (issue 4 §1): a transactional outbox, the deliveries it expands into and
 * their attempts; the account's choice to leave status metrics out of webhooks (spec 6.3.3); a
 * webhook's optional signing secret (rpmlab's addition).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>, d: Dialect): Promise<void> {
  // biome-ignore lint/suspicious/noExplicitAny: column builder callback shared by both dialects.
  const autoId = (c: any) =>
    d.kind === "sqlite"
      ? c.primaryKey().autoIncrement()
      : c.primaryKey().generatedByDefaultAsIdentity();

  await db.schema
    .alterTable("accounts")
    .addColumn("omit_status_metrics", d.bool, (c) => c.notNull().defaultTo(d.toBool(false)))
    .execute();
  await db.schema.alterTable("webhooks").addColumn("signing_secret", "text").execute();

  // Written in the transaction of the change (a stored batch, a fulfilment status, a patient
  // write), taken and deleted by the dispatcher in the transaction that creates the deliveries:
  // no id cursor, since PostgreSQL commits sequence values out of order.
  await db.schema
    .createTable("webhook_outbox")
    .addColumn("id", d.autoIdType, autoId)
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("payload", d.json, (c) => c.notNull())
    .addColumn("created", d.ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) =>
      c.notNull().references("accounts.id").onDelete("cascade"),
    )
    // No foreign key: the log outlives a deleted webhook (its pending deliveries then fail).
    .addColumn("webhook_id", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) =>
      c.notNull().check(sql`state in ('pending', 'delivered', 'failed', 'not_retried')`),
    )
    .addColumn("retry", d.bool, (c) => c.notNull())
    .addColumn("test", d.bool, (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    // Position among the deliveries created with it: with next_attempt_at, the claim's order,
    // which is also the order they were written in (a claim then updates neighbouring rows).
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", d.ms)
    .addColumn("hwi_device_id", "text")
    .addColumn("patient_id", "text")
    .addColumn("measurement_ids", d.json)
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .execute();
  // The dispatcher's queries touch pending rows only: which are due, per webhook, and when next
  // (few rows once the backlog is gone: the time of the next retry needs no index of its own).
  // seq completes the claim's order, so a claim reads its first rows off the index, unsorted.
  await db.schema
    .createIndex("webhook_deliveries_due")
    .on("webhook_deliveries")
    .columns(["webhook_id", "next_attempt_at", "seq"])
    .where(sql.ref("state"), "=", "pending")
    .execute();
  // The log, newest first per account; pruning by age goes account by account through it too.
  await db.schema
    .createIndex("webhook_deliveries_list")
    .on("webhook_deliveries")
    .columns(["account_id", "created", "id"])
    .execute();

  await db.schema
    .createTable("webhook_attempts")
    .addColumn("id", d.autoIdType, autoId)
    .addColumn("delivery_id", "text", (c) =>
      c.notNull().references("webhook_deliveries.id").onDelete("cascade"),
    )
    .addColumn("number", "integer", (c) => c.notNull())
    .addColumn("at", d.ms, (c) => c.notNull())
    .addColumn("endpoint", "text")
    .addColumn("status_code", "integer")
    .addColumn("error", "text")
    .addColumn("latency_ms", d.double, (c) => c.notNull())
    .addColumn("response_snippet", "text")
    .addColumn("manual", d.bool, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("webhook_attempts_delivery")
    .on("webhook_attempts")
    .columns(["delivery_id", "id"])
    .execute();
}
