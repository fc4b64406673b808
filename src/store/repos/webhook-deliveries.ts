import { type ExpressionBuilder, sql } from "kysely";
import { CHUNK, type Ctx, chunked, countOf, paged, templated } from "../context.ts";
import { readNum, readNumOrNull } from "../dialect.ts";
import { param, paramRow } from "../query-templates.ts";
import type { Database } from "../schema.ts";
import type { WebhookDeliveriesRepo } from "../store-webhooks.ts";
import {
  type AttemptOutcome,
  type AttemptRow,
  DELIVERY_STATES,
  type DeliveryState,
} from "../types-webhooks.ts";
import {
  attemptInsertable,
  deliveryInsertable,
  isClaimedAtCreation,
  toAttemptRow,
  toDeliveryRow,
} from "./webhook-delivery-rows.ts";

/** Rows per multi-row insert: a delivery has 17 columns, an attempt 10 (bound parameters). */
const INSERT_ROWS = 200;

/** SQLite's one-row form of the delivered update below (bound: modified, id). */
const DELIVERED_SQLITE = `update "webhook_deliveries" set "state" = 'delivered', "next_attempt_at" = null, "attempts" = "attempts" + 1, "modified" = ? where "id" = ? returning "attempts"`;

/**
 * Webhook deliveries and their attempts (issue 4 §1). A pending delivery's next_attempt_at is
 * both its due time and its claim: a dispatcher claims due rows by moving it to when its claim
 * lapses, so a process that dies while sending gives the delivery back by itself (its attempt
 * is then made again, with the same delivery id).
 */
export function webhookDeliveriesRepo(ctx: Ctx): WebhookDeliveriesRepo {
  const { db, d } = ctx;
  // A literal, not a bound value: the query's template keeps it, and it names the partial
  // index's own condition (migration 0003).
  const pending = () =>
    db.selectFrom("webhook_deliveries").where("state", "=", sql.lit<DeliveryState>("pending"));

  const attemptsOf = async (ids: readonly string[]): Promise<AttemptRow[]> => {
    const out: AttemptRow[] = [];
    for (const part of chunked(ids)) {
      const rows = await db
        .selectFrom("webhook_attempts")
        .selectAll()
        .where("delivery_id", "in", part)
        .orderBy("id")
        .execute();
      out.push(...rows.map((r) => toAttemptRow(r)));
    }
    return out;
  };

  return {
    async createMany(inputs) {
      const now = ctx.clock.now();
      const rows = inputs.map((input, i) => deliveryInsertable(ctx, input, now, i));
      if (ctx.sqlite !== undefined && ctx.inTx && rows.length > 0) {
        // SQLite in this thread: one prepared one-row insert per row, as measurements are
        // inserted (measurement-insert.ts); multi-row statements are parsed per row count.
        // deliveryInsertable's rows share one key order, the template's column order.
        const { sql } = ctx.templates.bind(
          "webhookDeliveries.insert",
          () => db.insertInto("webhook_deliveries").values(paramRow(rows[0]!)),
          rows[0]!,
        );
        const statement = ctx.sqlite.prepare(sql);
        for (const row of rows) statement.run(Object.values(row));
      } else {
        for (const part of chunked(rows, INSERT_ROWS)) {
          await db.insertInto("webhook_deliveries").values(part).execute();
        }
      }
      return rows.map((r, i) => ({
        id: r.id,
        accountId: r.account_id,
        webhookId: r.webhook_id,
        event: inputs[i]!.event,
        body: r.body,
        state: r.state as DeliveryState,
        retry: inputs[i]!.retry,
        test: inputs[i]!.test ?? false,
        attempts: 0,
        manualAttempts: 0,
        nextAttemptAt: readNumOrNull(r.next_attempt_at),
        inFlight: isClaimedAtCreation(inputs[i]!, now),
        hwiDeviceId: r.hwi_device_id ?? null,
        patientId: r.patient_id ?? null,
        measurementIds: inputs[i]!.measurementIds ?? null,
        created: now,
        modified: now,
      }));
    },

    async get(accountId, id) {
      const r = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .executeTakeFirst();
      return r === undefined ? null : toDeliveryRow(ctx, r);
    },

    async list(accountId, filter, page) {
      let q = db.selectFrom("webhook_deliveries").selectAll().where("account_id", "=", accountId);
      if (filter?.webhookId !== undefined) q = q.where("webhook_id", "=", filter.webhookId);
      if (filter?.state !== undefined) q = q.where("state", "=", filter.state);
      if (filter?.event !== undefined) q = q.where("event", "=", filter.event);
      if (filter?.hwiDeviceId !== undefined) q = q.where("hwi_device_id", "=", filter.hwiDeviceId);
      if (filter?.patientId !== undefined) q = q.where("patient_id", "=", filter.patientId);
      // A log: newest first.
      const rows = (
        await paged(q.orderBy("created", "desc").orderBy("id", "desc"), page).execute()
      ).map((r) => toDeliveryRow(ctx, r));
      const last = new Map<string, AttemptRow>();
      for (const a of await attemptsOf(rows.map((r) => r.id))) last.set(a.deliveryId, a);
      const total = page?.count ? await countOf(q) : undefined;
      return {
        rows: rows.map((r) => ({ ...r, lastAttempt: last.get(r.id) ?? null })),
        ...(total === undefined ? {} : { total }),
      };
    },

    async countByState(accountId) {
      const rows = await db
        .selectFrom("webhook_deliveries")
        .select((eb) => ["state", eb.fn.countAll().as("n")])
        .where("account_id", "=", accountId)
        .groupBy("state")
        .execute();
      const counts = Object.fromEntries(DELIVERY_STATES.map((state) => [state, 0]));
      for (const r of rows) counts[r.state] = readNum(r.n);
      return counts as Record<DeliveryState, number>;
    },

    attempts: (deliveryId) => attemptsOf([deliveryId]),

    // The dispatcher asks these at every round (dispatcher.ts): built once.
    async dueWebhooks(now) {
      const rows = await templated(
        ctx,
        "webhookDeliveries.dueWebhooks",
        () =>
          pending()
            .select("webhook_id")
            .distinct()
            .where("next_attempt_at", "<=", param<number>("now")),
        { now },
      );
      return rows.map((r) => r.webhook_id);
    },

    async nextDue() {
      const [row] = await templated(
        ctx,
        "webhookDeliveries.nextDue",
        () => pending().select((eb) => eb.fn.min("next_attempt_at").as("at")),
        {},
      );
      return row?.at === null || row?.at === undefined ? null : readNum(row.at);
    },

    async claim(webhookId, { now, until, limit }) {
      // The due rows are chosen once, in a materialised CTE: PostgreSQL may run a LIMIT
      // subquery of `id in (…)` more than once and update more than `limit` rows. Every
      // dispatcher round claims: built once (query-templates.ts).
      const rows = await templated(
        ctx,
        "webhookDeliveries.claim",
        () =>
          db
            .with(
              (wb) => wb("due").materialized(),
              (qb) => {
                const due = qb
                  .selectFrom("webhook_deliveries")
                  .select("id")
                  .where("state", "=", sql.lit<DeliveryState>("pending"))
                  .where("webhook_id", "=", param<string>("webhookId"))
                  .where("next_attempt_at", "<=", param<number>("now"))
                  .orderBy("next_attempt_at")
                  .orderBy("seq")
                  .limit(param<number>("limit"));
                return d.kind === "postgres" ? due.forUpdate().skipLocked() : due;
              },
            )
            .updateTable("webhook_deliveries")
            // claimed: the log tells this lapse time from a due time (migration 0014); a
            // literal, so the statement binds no more than it did.
            .set({ next_attempt_at: param<number>("until"), claimed: sql.lit(d.toBool(true)) })
            .where("id", "in", (eb) => eb.selectFrom("due").select("due.id"))
            // Checked again on the row itself: PostgreSQL re-reads a row another transaction
            // claimed meanwhile, and this condition then leaves it out.
            .where("state", "=", sql.lit<DeliveryState>("pending"))
            .where("next_attempt_at", "<=", param<number>("now"))
            .returningAll(),
        { webhookId, now, until, limit },
      );
      // RETURNING promises no order: as they were due, then created.
      return rows
        .sort((a, b) => readNum(a.next_attempt_at) - readNum(b.next_attempt_at) || a.seq - b.seq)
        .map((r) => toDeliveryRow(ctx, r));
    },

    async record(outcomes) {
      if (outcomes.length === 0) return;
      const now = ctx.clock.now();
      const numbers = new Map<string, number>();
      // Delivered automatically: one statement for all of them (the common case).
      const isBatched = (o: AttemptOutcome) => o.state === "delivered" && !o.attempt.manual;
      const delivered = outcomes.filter(isBatched).map((o) => o.deliveryId);
      if (ctx.sqlite !== undefined && ctx.inTx) {
        const statement = ctx.sqlite.prepare(DELIVERED_SQLITE);
        for (const id of delivered) {
          const r = statement.all([now, id])[0] as { attempts: number } | undefined;
          if (r !== undefined) numbers.set(id, Number(r.attempts));
        }
        delivered.length = 0;
      }
      for (const part of chunked(delivered)) {
        const rows = await db
          .updateTable("webhook_deliveries")
          .set((eb) => ({
            state: "delivered",
            next_attempt_at: null,
            attempts: eb("attempts", "+", 1),
            modified: now,
          }))
          .where("id", "in", part)
          .returning(["id", "attempts"])
          .execute();
        for (const r of rows) numbers.set(r.id, readNum(r.attempts));
      }
      for (const o of outcomes) {
        if (isBatched(o)) continue;
        const { state } = o;
        const r =
          state === null
            ? undefined
            : await db
                .updateTable("webhook_deliveries")
                .set((eb) => ({
                  state,
                  next_attempt_at: o.nextAttemptAt,
                  claimed: d.toBool(false),
                  ...counted(eb, o),
                }))
                .where("id", "=", o.deliveryId)
                // Delivered once is delivered: a late failure (a resend racing an automatic
                // attempt) is logged but never makes it pending again.
                .where("state", "<>", "delivered")
                .returning(["id", "attempts"])
                .executeTakeFirst();
        if (r !== undefined) numbers.set(r.id, readNum(r.attempts));
        else await countLoggedOnly(o, numbers);
      }
      const attempts = outcomes.flatMap((o) => {
        const n = numbers.get(o.deliveryId);
        return n === undefined ? [] : [attemptInsertable(ctx, o.deliveryId, n, o.attempt)];
      });
      if (ctx.sqlite !== undefined && ctx.inTx && attempts.length > 0) {
        const { sql } = ctx.templates.bind(
          "webhookAttempts.insert",
          () => db.insertInto("webhook_attempts").values(paramRow(attempts[0]!)),
          attempts[0]!,
        );
        const statement = ctx.sqlite.prepare(sql);
        for (const row of attempts) statement.run(Object.values(row));
        return;
      }
      for (const part of chunked(attempts, INSERT_ROWS)) {
        await db.insertInto("webhook_attempts").values(part).execute();
      }
    },

    async release(ids, at) {
      for (const part of chunked(ids)) {
        await db
          .updateTable("webhook_deliveries")
          .set({ next_attempt_at: at, claimed: d.toBool(false) })
          .where("id", "in", part)
          .where("state", "=", "pending")
          .execute();
      }
    },

    async prune(before) {
      let total = 0;
      const accounts = await db.selectFrom("accounts").select("id").execute();
      for (const { id: account } of accounts) {
        for (;;) {
          const ids = (
            await db
              .selectFrom("webhook_deliveries")
              .select("id")
              .where("account_id", "=", account)
              .where("created", "<", before)
              .where("state", "<>", "pending")
              .limit(CHUNK)
              .execute()
          ).map((r) => r.id);
          if (ids.length === 0) break;
          // Attempts first: no reliance on ON DELETE CASCADE being enabled on the connection.
          await db.deleteFrom("webhook_attempts").where("delivery_id", "in", ids).execute();
          await db.deleteFrom("webhook_deliveries").where("id", "in", ids).execute();
          total += ids.length;
        }
      }
      return total;
    },
  };

  /** One more attempt, and one more resend if it was one. */
  function counted(eb: ExpressionBuilder<Database, "webhook_deliveries">, o: AttemptOutcome) {
    return {
      attempts: eb("attempts", "+", 1),
      manual_attempts: eb("manual_attempts", "+", o.attempt.manual ? 1 : 0),
      modified: ctx.clock.now(),
    };
  }

  /**
   * An attempt that leaves its delivery's state as it is in the store now (a failed resend, or a
   * delivered delivery's late failure): logged with the next number.
   */
  async function countLoggedOnly(o: AttemptOutcome, numbers: Map<string, number>) {
    const r = await db
      .updateTable("webhook_deliveries")
      .set((eb) => counted(eb, o))
      .where("id", "=", o.deliveryId)
      .returning(["id", "attempts"])
      .executeTakeFirst();
    if (r !== undefined) numbers.set(r.id, readNum(r.attempts));
  }
}
