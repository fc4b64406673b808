import { type Ctx, invalid, notFound, templated } from "../context.ts";
import { readNum } from "../dialect.ts";
import { param } from "../query-templates.ts";
import type { WhitelistRepo } from "../store.ts";
import type { WhitelistRow, WhitelistStatus } from "../types-hardware.ts";

/** Spec 2.3 whitelisted devices: devices locked to a gateway. */
export function whitelistRepo(ctx: Ctx): WhitelistRepo {
  const { db } = ctx;
  const gatewayOf = async (gatewayUuid: string) => {
    const gw = await db
      .selectFrom("gateways")
      .select(["id", "gateway_uuid"])
      .where("gateway_uuid_lc", "=", gatewayUuid.toLowerCase())
      .executeTakeFirst();
    if (gw === undefined) throw notFound("gateway", { gateway_uuid: gatewayUuid });
    return gw;
  };
  const list = async (gatewayUuid: string): Promise<WhitelistRow[]> => {
    // Each check-in reconciles it (query-templates.ts: built once).
    const rows = await templated(
      ctx,
      "whitelist.list",
      () =>
        db
          .selectFrom("gateway_whitelist")
          .innerJoin("gateways", "gateways.id", "gateway_whitelist.gateway_id")
          .selectAll("gateway_whitelist")
          .select("gateways.gateway_uuid")
          .where("gateways.gateway_uuid_lc", "=", param<string>("uuidLc"))
          .orderBy("gateway_whitelist.created")
          .orderBy("gateway_whitelist.mac_address"),
      { uuidLc: gatewayUuid.toLowerCase() },
    );
    return rows.map(
      (r): WhitelistRow => ({
        gatewayUuid: r.gateway_uuid,
        macAddress: r.mac_address,
        sensorCode: r.sensor_code,
        whitelistStatus: r.whitelist_status as WhitelistStatus,
        created: readNum(r.created),
        modified: readNum(r.modified),
      }),
    );
  };
  return {
    async upsert(gatewayUuid, entry) {
      if (entry.whitelistStatus !== "RE" && entry.whitelistStatus !== "CO") {
        throw invalid("whitelist_status must be RE or CO (spec 2.3)", {
          field: "whitelist_status",
          value: entry.whitelistStatus,
        });
      }
      const gw = await gatewayOf(gatewayUuid);
      const now = ctx.clock.now();
      const r = await db
        .insertInto("gateway_whitelist")
        .values({
          gateway_id: gw.id,
          mac_address: entry.macAddress,
          sensor_code: entry.sensorCode,
          whitelist_status: entry.whitelistStatus,
          created: now,
          modified: now,
        })
        .onConflict((oc) =>
          oc.columns(["gateway_id", "mac_address"]).doUpdateSet({
            sensor_code: entry.sensorCode,
            whitelist_status: entry.whitelistStatus,
            modified: now,
          }),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return {
        gatewayUuid: gw.gateway_uuid,
        macAddress: r.mac_address,
        sensorCode: r.sensor_code,
        whitelistStatus: r.whitelist_status as WhitelistStatus,
        created: readNum(r.created),
        modified: readNum(r.modified),
      };
    },
    list,
    async reconcile(gatewayUuid, heldMacAddresses) {
      const held = new Set(heldMacAddresses.map((m) => m.toUpperCase()));
      const whitelist: WhitelistRow[] = [];
      const changed: WhitelistRow[] = [];
      const now = ctx.clock.now();
      for (const entry of await list(gatewayUuid)) {
        const status: WhitelistStatus = held.has(entry.macAddress.toUpperCase()) ? "CO" : "RE";
        if (status === entry.whitelistStatus) {
          whitelist.push(entry);
          continue;
        }
        await db
          .updateTable("gateway_whitelist")
          .set({ whitelist_status: status, modified: now })
          .where("mac_address", "=", entry.macAddress)
          .where("gateway_id", "in", (eb) =>
            eb
              .selectFrom("gateways")
              .select("id")
              .where("gateway_uuid_lc", "=", gatewayUuid.toLowerCase()),
          )
          .execute();
        const updated = { ...entry, whitelistStatus: status, modified: now };
        whitelist.push(updated);
        changed.push(updated);
      }
      return { whitelist, changed };
    },
    async remove(gatewayUuid, macAddress) {
      const result = await db
        .deleteFrom("gateway_whitelist")
        .where("mac_address", "=", macAddress)
        .where("gateway_id", "in", (eb) =>
          eb
            .selectFrom("gateways")
            .select("id")
            .where("gateway_uuid_lc", "=", gatewayUuid.toLowerCase()),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
