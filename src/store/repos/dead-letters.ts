import type { Selectable } from "kysely";
import { type Ctx, countOf, invalid, paged } from "../context.ts";
import { readNum, writeBytes } from "../dialect.ts";
import type { DeadLettersTable } from "../schema.ts";
import type { DeadLettersRepo } from "../store.ts";
import type { DeadLetterRow } from "../types-ingest.ts";

function toDeadLetterRow(r: Selectable<DeadLettersTable>): DeadLetterRow {
  return {
    id: readNum(r.id),
    topic: r.topic,
    payload: new Uint8Array(r.payload),
    reason: r.reason,
    received: readNum(r.received),
    messageId: r.message_id,
  };
}

/** Uplink messages ingestion could not use, kept byte for byte with the reason. */
export function deadLettersRepo(ctx: Ctx): DeadLettersRepo {
  const { db } = ctx;
  return {
    async add(input) {
      if (!(input.payload instanceof Uint8Array)) {
        throw invalid("payload must be bytes", { field: "payload" });
      }
      const r = await db
        .insertInto("dead_letters")
        .values({
          topic: input.topic,
          payload: writeBytes(input.payload),
          reason: input.reason,
          received: input.received ?? ctx.clock.now(),
          message_id: input.messageId ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toDeadLetterRow(r);
    },
    async get(id) {
      const r = await db
        .selectFrom("dead_letters")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return r === undefined ? null : toDeadLetterRow(r);
    },
    async list(page) {
      const q = db.selectFrom("dead_letters").selectAll();
      const rows = await paged(q.orderBy("id"), page).execute();
      const total = page?.count ? await countOf(q) : undefined;
      return { rows: rows.map(toDeadLetterRow), ...(total === undefined ? {} : { total }) };
    },
    async delete(id) {
      const result = await db.deleteFrom("dead_letters").where("id", "=", id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
