import { sql } from "kysely";
import { type Ctx, countOf, paged } from "../context.ts";
import type { HardwareLogsRepo } from "../store.ts";
import { addHardwareLog, toHardwareLogRow } from "./devices-hardware.ts";

/** hwi-hardware-uuid-logs (spec 4.3): oldest first. */
export function hardwareLogsRepo(ctx: Ctx): HardwareLogsRepo {
  return {
    add: (accountId, entry) => addHardwareLog(ctx, accountId, entry),
    async list(accountId, filter, page) {
      let q = ctx.db.selectFrom("hardware_logs").selectAll().where("account_id", "=", accountId);
      if (filter?.deviceId !== undefined) q = q.where("device_id", "=", filter.deviceId);
      if (filter?.previousHardwareUuid !== undefined) {
        const uuid = filter.previousHardwareUuid.toLowerCase();
        q = q.where(sql`lower(previous_hardware_uuid)`, "=", uuid);
      }
      if (filter?.reason !== undefined) q = q.where("reason", "=", filter.reason);
      const rows = await paged(q.orderBy("id"), page).execute();
      const total = page?.count ? await countOf(q) : undefined;
      return { rows: rows.map(toHardwareLogRow), ...(total === undefined ? {} : { total }) };
    },
  };
}
