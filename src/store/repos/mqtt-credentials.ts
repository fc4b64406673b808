import type { Selectable } from "kysely";
import { hashApiKey, randomBase62, sameHash } from "../api-key-secret.ts";
import { type Ctx, invalid } from "../context.ts";
import { readNum } from "../dialect.ts";
import type { MqttCredentialsTable } from "../schema.ts";
import type { MqttCredentialsRepo } from "../store.ts";
import { MQTT_ROLES, type MqttCredentialRow, type MqttRole } from "../types-hardware.ts";

/** About 190 bits; SHA-256 of such a secret needs no salt or slow hash (api-key-secret.ts). */
const PASSWORD_LENGTH = 32;

function toRow(r: Selectable<MqttCredentialsTable>): MqttCredentialRow {
  return {
    username: r.username,
    role: r.role as MqttRole,
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}

/** MQTT usernames and hashed passwords (issue 4: per gateway and per IMEI, issued by the lab). */
export function mqttCredentialsRepo(ctx: Ctx): MqttCredentialsRepo {
  const { db } = ctx;
  return {
    async issue(username, role) {
      if (username === "" || username.length > 128) {
        throw invalid("username must be 1 to 128 characters", { field: "username" });
      }
      if (!MQTT_ROLES.includes(role)) {
        throw invalid(`role must be one of ${MQTT_ROLES.join(", ")}`, {
          field: "role",
          value: role,
        });
      }
      const password = randomBase62(PASSWORD_LENGTH);
      const now = ctx.clock.now();
      const r = await db
        .insertInto("mqtt_credentials")
        .values({
          username,
          role,
          secret_hash: hashApiKey(password),
          created: now,
          modified: now,
        })
        .onConflict((oc) =>
          oc
            .column("username")
            .doUpdateSet({ role, secret_hash: hashApiKey(password), modified: now }),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return { username, password, credential: toRow(r) };
    },
    async get(username) {
      const r = await db
        .selectFrom("mqtt_credentials")
        .selectAll()
        .where("username", "=", username)
        .executeTakeFirst();
      return r === undefined ? null : toRow(r);
    },
    async verify(username, password) {
      const r = await db
        .selectFrom("mqtt_credentials")
        .selectAll()
        .where("username", "=", username)
        .executeTakeFirst();
      if (r === undefined) return null;
      return sameHash(r.secret_hash, hashApiKey(password)) ? toRow(r) : null;
    },
    async revoke(username) {
      const result = await db
        .deleteFrom("mqtt_credentials")
        .where("username", "=", username)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
