import { type Selectable, type SelectQueryBuilder, sql } from "kysely";
import { type Ctx, countOf, paged, templatedIn } from "../context.ts";
import { param } from "../query-templates.ts";
import type { Database, HardwareLogsTable } from "../schema.ts";
import type { HardwareLogsRepo } from "../store.ts";
import type { HardwareLogReason, HardwareLogRow } from "../types.ts";
import { addHardwareLog, toHardwareLogRow } from "./devices-hardware.ts";

/** hwi-hardware-uuid-logs (spec 4.3): oldest first. */
export function hardwareLogsRepo(ctx: Ctx): HardwareLogsRepo {
  return {
    add: (accountId, entry) => addHardwareLog(ctx, accountId, entry),
    async list(accountId, filter, page) {
      let q = ctx.db.selectFrom("hardware_logs").selectAll().where("account_id", "=", accountId);
      if (filter?.deviceId !== undefined) q = q.where("device_id", "=", filter.deviceId);
      if (filter?.previousHardwareUuid !== undefined) {
        q = q.where("previous_hardware_uuid_lc", "=", filter.previousHardwareUuid.toLowerCase());
      }
      if (filter?.reason !== undefined) q = q.where("reason", "=", filter.reason);
      const rows = await paged(q.orderBy("id"), page).execute();
      const total = page?.count ? await countOf(q) : undefined;
      return { rows: rows.map(toHardwareLogRow), ...(total === undefined ? {} : { total }) };
    },
    departures: (hardwareUuids, since) =>
      takenOff(ctx, "hardwareLogs.departures", hardwareUuids, { since }, (q) =>
        q.where("created", ">", param<number>("since")),
      ),
    replacedFrom: (hardwareUuids) =>
      takenOff(ctx, "hardwareLogs.replacedFrom", hardwareUuids, {}, (q) =>
        q.where("reason", "=", sql.lit<HardwareLogReason>("replacement")),
      ),
  };
}

type LogQuery = SelectQueryBuilder<Database, "hardware_logs", Selectable<HardwareLogsTable>>;

/**
 * For ingestion: the entries that took a device off one of `hardwareUuids` (any case, any
 * account), narrowed by `narrow`, oldest first. One query per batch, built once per list size.
 */
async function takenOff(
  ctx: Ctx,
  shape: string,
  hardwareUuids: readonly string[],
  values: Readonly<Record<string, unknown>>,
  narrow: (q: LogQuery) => LogQuery,
): Promise<HardwareLogRow[]> {
  const rows = await templatedIn(
    ctx,
    shape,
    [...new Set(hardwareUuids.map((u) => u.toLowerCase()))],
    (list) =>
      narrow(
        ctx.db
          .selectFrom("hardware_logs")
          .selectAll()
          .where("previous_hardware_uuid_lc", "in", list),
      ),
    values,
  );
  return rows.map(toHardwareLogRow).sort((a, b) => a.created - b.created || a.id - b.id);
}
