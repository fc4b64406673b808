import type { Selectable } from "kysely";
import { atomic, type Ctx, notFound } from "../context.ts";
import { readNum } from "../dialect.ts";
import type { DevicePropertiesTable } from "../schema.ts";
import type { DevicePropertiesRepo } from "../store.ts";
import type { DevicePropertyRow } from "../types.ts";

function toPropertyRow(r: Selectable<DevicePropertiesTable>): DevicePropertyRow {
  return {
    deviceId: r.device_id,
    key: r.key,
    value: r.value,
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}

/** Device properties, a key/value list (spec 2.4), e.g. measurement_webhook_id (spec 6.3). */
export function devicePropertiesRepo(ctx: Ctx): DevicePropertiesRepo {
  const { db } = ctx;
  return {
    async list(deviceId) {
      const rows = await db
        .selectFrom("device_properties")
        .selectAll()
        .where("device_id", "=", deviceId)
        // By code point on both dialects, whatever the database's collation.
        .orderBy(ctx.d.byCodePoint("key"))
        .execute();
      return rows.map(toPropertyRow);
    },
    set(deviceId, key, value) {
      return atomic(ctx, async (tx) => {
        const device = await tx.db
          .selectFrom("devices")
          .select("id")
          .where("id", "=", deviceId)
          .executeTakeFirst();
        if (device === undefined) throw notFound("device", { id: deviceId });
        const now = ctx.clock.now();
        const r = await tx.db
          .insertInto("device_properties")
          .values({ device_id: deviceId, key, value, created: now, modified: now })
          .onConflict((oc) =>
            oc.columns(["device_id", "key"]).doUpdateSet({ value, modified: now }),
          )
          .returningAll()
          .executeTakeFirstOrThrow();
        return toPropertyRow(r);
      });
    },
    async delete(deviceId, key) {
      const result = await db
        .deleteFrom("device_properties")
        .where("device_id", "=", deviceId)
        .where("key", "=", key)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
