import type { Kysely } from "kysely";

/**
 * Spec 2.2 `hardware_uuid__iexact`: a gateway's devices, listed in (created, id) order within
 * the account. With only devices_list (account_id, created, id) and the partial
 * devices_gateway_slot (hardware_uuid_lc, slot), SQLite walked every device of the account in
 * list order to find one gateway's few: 0.66 ms a query at 2,000 devices, growing with the
 * account. This index answers the filter and the order together.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("devices_by_hardware")
    .on("devices")
    .columns(["account_id", "hardware_uuid_lc", "created", "id"])
    .execute();
}
