import { sql } from "kysely";
import { type Ctx, countOf, paged, templatedIn } from "../context.ts";
import { param } from "../query-templates.ts";
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
    async departures(hardwareUuids, since) {
      const rows = await templatedIn(
        ctx,
        "hardwareLogs.departures",
        [...new Set(hardwareUuids.map((u) => u.toLowerCase()))],
        (list) =>
          ctx.db
            .selectFrom("hardware_logs")
            .selectAll()
            .where("previous_hardware_uuid_lc", "in", list)
            .where("created", ">", param<number>("since")),
        { since },
      );
      return rows.map(toHardwareLogRow).sort(byCreation);
    },
    async replacedFrom(hardwareUuids) {
      const rows = await templatedIn(
        ctx,
        "hardwareLogs.replacedFrom",
        [...new Set(hardwareUuids.map((u) => u.toLowerCase()))],
        (list) =>
          ctx.db
            .selectFrom("hardware_logs")
            .selectAll()
            .where("previous_hardware_uuid_lc", "in", list)
            .where("reason", "=", sql.lit<HardwareLogReason>("replacement")),
        {},
      );
      return rows.map(toHardwareLogRow).sort(byCreation);
    },
  };
}

function byCreation(a: HardwareLogRow, b: HardwareLogRow): number {
  return a.created - b.created || a.id - b.id;
}
