import type { Ctx } from "../context.ts";
import { readNum, readNumOrNull } from "../dialect.ts";
import type { GlucometerSuppliesRepo } from "../store-asr.ts";

/**
 * What a glucometer's strip estimate is computed from (spec 2.7 "Glucometer supply record"):
 * the glucose readings of its meters, and the offset a client's PUT left on each meter. Strips
 * shipped come from the supply requests (SupplyRequestsRepo.stripsShipped).
 */
export function glucometerSuppliesRepo(ctx: Ctx): GlucometerSuppliesRepo {
  const { db } = ctx;
  return {
    async usage(accountId, deviceIds, recent) {
      if (deviceIds.length === 0) return { used: 0, recent: 0, first: null };
      // The measurements_device index (account, device, timestamp, id, metric) covers it.
      const row = await db
        .selectFrom("measurements")
        .select((eb) => [
          eb.fn.countAll<number>().as("used"),
          eb.fn
            .sum<number>(
              eb
                .case()
                .when(
                  eb.and([eb("timestamp", ">=", recent.since), eb("timestamp", "<=", recent.now)]),
                )
                .then(1)
                .else(0)
                .end(),
            )
            .as("recent"),
          eb.fn.min<number>("timestamp").as("first"),
        ])
        .where("account_id", "=", accountId)
        .where("device_id", "in", deviceIds)
        .where("metric", "=", "glucose")
        .executeTakeFirst();
      return {
        used: readNum(row?.used ?? 0),
        recent: readNum(row?.recent ?? 0),
        first: readNumOrNull(row?.first ?? null),
      };
    },
    async offset(accountId, deviceIds) {
      if (deviceIds.length === 0) return 0;
      const row = await db
        .selectFrom("glucometer_supply_offsets")
        .select((eb) => eb.fn.sum<number>("strips_offset").as("n"))
        .where("account_id", "=", accountId)
        .where("device_id", "in", deviceIds)
        .executeTakeFirst();
      return readNum(row?.n ?? 0);
    },
    async setOffset(accountId, deviceId, offset) {
      const modified = ctx.clock.now();
      await db
        .insertInto("glucometer_supply_offsets")
        .values({ account_id: accountId, device_id: deviceId, strips_offset: offset, modified })
        .onConflict((oc) =>
          oc.columns(["account_id", "device_id"]).doUpdateSet({ strips_offset: offset, modified }),
        )
        .execute();
    },
  };
}
