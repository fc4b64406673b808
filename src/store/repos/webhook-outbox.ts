import type { Selectable } from "kysely";
import { type Ctx, chunked, invalid } from "../context.ts";
import { readNum, writeJson } from "../dialect.ts";
import type { WebhookOutboxTable } from "../schema.ts";
import type { WebhookOutboxRepo } from "../store.ts";
import { WEBHOOK_EVENTS, type WebhookEvent } from "../types-ingest.ts";
import type { IdRange, OutboxEntry } from "../types-webhooks.ts";
import { toMeasurementRow } from "./measurement-rows.ts";

interface Payload {
  readonly ranges?: readonly IdRange[];
  readonly body?: unknown;
  readonly hwi_device_id?: string | null;
  readonly patient_id?: string | null;
}

function toEntry(ctx: Ctx, r: Selectable<WebhookOutboxTable>): OutboxEntry {
  const p = ctx.d.readJson(r.payload) as Payload;
  return {
    id: readNum(r.id),
    accountId: r.account_id,
    event: r.event as WebhookEvent,
    ranges: p.ranges ?? null,
    body: p.body ?? null,
    hwiDeviceId: p.hwi_device_id ?? null,
    patientId: p.patient_id ?? null,
    created: readNum(r.created),
  };
}

/**
 * The transactional outbox (issue 4 §1, "none is lost"): `add` runs in the transaction of the
 * change, `take` and `delete` in the dispatcher's transaction that creates the deliveries, so an
 * event becomes deliveries exactly once. Rows are taken and deleted, never read past by an id
 * cursor: PostgreSQL commits sequence values out of order.
 */
export function webhookOutboxRepo(ctx: Ctx): WebhookOutboxRepo {
  const { db, d } = ctx;
  return {
    async add(entry) {
      if (!(WEBHOOK_EVENTS as readonly string[]).includes(entry.event)) {
        throw invalid(`event must be one of ${WEBHOOK_EVENTS.join(", ")}`, { field: "event" });
      }
      const payload: Payload =
        entry.ranges === undefined
          ? {
              body: entry.body ?? null,
              hwi_device_id: entry.hwiDeviceId ?? null,
              patient_id: entry.patientId ?? null,
            }
          : { ranges: entry.ranges };
      await db
        .insertInto("webhook_outbox")
        .values({
          account_id: entry.accountId,
          event: entry.event,
          payload: writeJson(payload),
          created: ctx.clock.now(),
        })
        .execute();
    },
    async take(limit) {
      let q = db.selectFrom("webhook_outbox").selectAll().orderBy("id").limit(limit);
      // Two dispatchers on one PostgreSQL database each take rows the other has not locked.
      if (d.kind === "postgres") q = q.forUpdate().skipLocked();
      return (await q.execute()).map((r) => toEntry(ctx, r));
    },
    async delete(ids) {
      for (const part of chunked(ids)) {
        await db.deleteFrom("webhook_outbox").where("id", "in", part).execute();
      }
    },
    async count() {
      const row = await db
        .selectFrom("webhook_outbox")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirst();
      return readNum(row?.n ?? 0);
    },
    async measurements(accountId, ranges) {
      const rows = [];
      for (const [first, last] of ranges) {
        rows.push(
          ...(await db
            .selectFrom("measurements")
            .selectAll()
            .where("account_id", "=", accountId)
            .where("id", ">=", first)
            .where("id", "<=", last)
            .orderBy("id")
            .execute()),
        );
      }
      return rows.map((r) => toMeasurementRow(ctx, r));
    },
    async propertyValues(deviceIds, key) {
      const out = new Map<string, string>();
      for (const part of chunked(deviceIds)) {
        const rows = await db
          .selectFrom("device_properties")
          .select(["device_id", "value"])
          .where("key", "=", key)
          .where("device_id", "in", part)
          .execute();
        for (const r of rows) out.set(r.device_id, r.value);
      }
      return out;
    },
  };
}
