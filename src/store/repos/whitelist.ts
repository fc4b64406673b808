import { type Ctx, invalid, notFound, templatedIn } from "../context.ts";
import { readNum } from "../dialect.ts";
import type { WhitelistRepo } from "../store.ts";
import { heldKey, type WhitelistRow, type WhitelistStatus } from "../types-hardware.ts";

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
  /**
   * The whitelists of these gateways (any case), by lower-case uuid, entries oldest first: one
   * query for an ingested batch's check-ins (query-templates.ts: built once per list shape).
   */
  const listMany = async (gatewayUuids: readonly string[]) => {
    const byGateway = new Map<string, WhitelistRow[]>();
    const lc = [...new Set(gatewayUuids.map((u) => u.toLowerCase()))];
    for (const uuid of lc) byGateway.set(uuid, []);
    const rows = await templatedIn(ctx, "whitelist.listMany", lc, (inList) =>
      db
        .selectFrom("gateway_whitelist")
        .innerJoin("gateways", "gateways.id", "gateway_whitelist.gateway_id")
        .selectAll("gateway_whitelist")
        .select(["gateways.gateway_uuid", "gateways.gateway_uuid_lc"])
        .where("gateways.gateway_uuid_lc", "in", inList)
        .orderBy("gateway_whitelist.created")
        .orderBy("gateway_whitelist.mac_address"),
    );
    for (const r of rows) byGateway.get(r.gateway_uuid_lc)!.push(toWhitelistRow(r));
    return byGateway;
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
      return toWhitelistRow({ ...r, gateway_uuid: gw.gateway_uuid });
    },
    list: async (gatewayUuid) => (await listMany([gatewayUuid])).get(gatewayUuid.toLowerCase())!,
    async reconcile(reports) {
      const current = await listMany(reports.map((r) => r.gatewayUuid));
      const now = ctx.clock.now();
      const results = [];
      for (const { gatewayUuid, held: devices } of reports) {
        const held = new Set(devices.map(heldKey));
        const whitelist: WhitelistRow[] = [];
        const changed: WhitelistRow[] = [];
        for (const entry of current.get(gatewayUuid.toLowerCase())!) {
          const status: WhitelistStatus = held.has(heldKey(entry)) ? "CO" : "RE";
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
        // A later report of the same gateway (twice in a batch) starts from this one's result.
        current.set(gatewayUuid.toLowerCase(), whitelist);
        results.push({ whitelist, changed });
      }
      return results;
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

function toWhitelistRow(r: {
  gateway_uuid: string;
  mac_address: string;
  sensor_code: string;
  whitelist_status: string;
  created: unknown;
  modified: unknown;
}): WhitelistRow {
  return {
    gatewayUuid: r.gateway_uuid,
    macAddress: r.mac_address,
    sensorCode: r.sensor_code,
    whitelistStatus: r.whitelist_status as WhitelistStatus,
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}
