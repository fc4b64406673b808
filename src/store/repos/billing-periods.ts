import type { Selectable } from "kysely";
import { type Ctx, invalid } from "../context.ts";
import { readNum, readNumOrNull } from "../dialect.ts";
import type { BillingPeriodsTable } from "../schema.ts";
import type { BillingPeriodsRepo } from "../store.ts";
import type { BillingBasis, BillingPeriodRow } from "../types-shipments.ts";

const BASES: readonly BillingBasis[] = ["activation", "delivery", "pickup"];

function toRow(r: Selectable<BillingPeriodsTable>): BillingPeriodRow {
  return {
    id: readNum(r.id),
    accountId: r.account_id,
    deviceId: r.device_id,
    started: readNum(r.started),
    ended: readNumOrNull(r.ended),
    basis: r.basis as BillingBasis,
  };
}

/** Billable periods of devices (spec 4.2: billing stops at unlink). */
export function billingPeriodsRepo(ctx: Ctx): BillingPeriodsRepo {
  const { db } = ctx;
  const openOf = (deviceId: string) =>
    db
      .selectFrom("billing_periods")
      .selectAll()
      .where("device_id", "=", deviceId)
      .where("ended", "is", null)
      .executeTakeFirst();

  return {
    async open(accountId, deviceId, at, basis) {
      if (!BASES.includes(basis)) {
        throw invalid(`basis must be one of ${BASES.join(", ")}`, { field: "basis" });
      }
      const current = await openOf(deviceId);
      if (current !== undefined) return toRow(current);
      const r = await db
        .insertInto("billing_periods")
        .values({ account_id: accountId, device_id: deviceId, started: at, ended: null, basis })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRow(r);
    },
    async close(accountId, deviceIds, at) {
      let closed = 0;
      for (const deviceId of deviceIds) {
        const current = await openOf(deviceId);
        if (current === undefined || current.account_id !== accountId) continue;
        await db
          .updateTable("billing_periods")
          .set({ ended: Math.max(at, readNum(current.started)) })
          .where("id", "=", current.id)
          .execute();
        closed++;
      }
      return closed;
    },
    async list(filter) {
      let q = db.selectFrom("billing_periods").selectAll();
      if (filter.accountId !== undefined) q = q.where("account_id", "=", filter.accountId);
      if (filter.deviceId !== undefined) q = q.where("device_id", "=", filter.deviceId);
      if (filter.to !== undefined) q = q.where("started", "<", filter.to);
      if (filter.from !== undefined) {
        const from = filter.from;
        q = q.where((eb) => eb.or([eb("ended", "is", null), eb("ended", ">", from)]));
      }
      const rows = await q.orderBy("account_id").orderBy("started").orderBy("id").execute();
      return rows.map(toRow);
    },
  };
}
