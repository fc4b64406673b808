import { type Kysely, sql } from "kysely";
import type { Dialect } from "../dialect.ts";

/**
 * MQTT credentials the lab issues (issue 4: per gateway, per IMEI, and for its own services):
 * the username is the gateway uuid, the IMEI or the service name, so broker ACLs can be written
 * as patterns over it (Mosquitto's %u); the password is stored as its SHA-256 only.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, untyped (Kysely's advice).
export async function up(db: Kysely<any>, d: Dialect): Promise<void> {
  await db.schema
    .createTable("mqtt_credentials")
    .addColumn("username", "text", (c) => c.primaryKey())
    .addColumn("role", "text", (c) =>
      c.notNull().check(sql`role in ('gateway', 'cellular', 'service')`),
    )
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("created", d.ms, (c) => c.notNull())
    .addColumn("modified", d.ms, (c) => c.notNull())
    .execute();
}
