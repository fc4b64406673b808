import type { Selectable } from "kysely";
import type { Ctx } from "../context.ts";
import { readBool, readNumOrNull } from "../dialect.ts";
import type { AsrSettingsTable } from "../schema-asr.ts";
import type { AsrSettingsRepo } from "../store-asr.ts";
import type { AutoReorderSettings } from "../types-asr.ts";

function toSettings(r: Selectable<AsrSettingsTable>): AutoReorderSettings {
  return {
    stripsBelow: readNumOrNull(r.strips_below),
    daysBelow: readNumOrNull(r.days_below),
    supplyName: r.supply_name,
  };
}

/** Automatic reorder thresholds per account (spec 1.4); none: the account orders by hand. */
export function asrSettingsRepo(ctx: Ctx): AsrSettingsRepo {
  const { db } = ctx;
  return {
    async autoReorder(accountId) {
      const r = await db
        .selectFrom("asr_settings")
        .selectAll()
        .where("account_id", "=", accountId)
        .executeTakeFirst();
      return r === undefined ? null : toSettings(r);
    },
    async setAutoReorder(accountId, settings) {
      if (settings === null) {
        await db.deleteFrom("asr_settings").where("account_id", "=", accountId).execute();
        return;
      }
      const values = {
        strips_below: settings.stripsBelow,
        days_below: settings.daysBelow,
        supply_name: settings.supplyName,
        modified: ctx.clock.now(),
      };
      await db
        .insertInto("asr_settings")
        .values({ account_id: accountId, ...values })
        .onConflict((oc) => oc.column("account_id").doUpdateSet(values))
        .execute();
    },
    async autoReordering() {
      const rows = await db
        .selectFrom("asr_settings")
        .innerJoin("accounts", "accounts.id", "asr_settings.account_id")
        .selectAll("asr_settings")
        .select("accounts.asr_enabled")
        .orderBy("asr_settings.account_id")
        .execute();
      return rows
        .filter((r) => readBool(r.asr_enabled))
        .map((r) => ({ accountId: r.account_id, settings: toSettings(r) }));
    },
  };
}
