import { CHUNK, type Ctx, chunked } from "../context.ts";
import type { IngestedMessagesRepo } from "../store.ts";

let claimOne: string | undefined;

/** `insert … on conflict do nothing` of one id, compiled once; parameters: id, received. */
function claimSql(ctx: Ctx): string {
  claimOne ??= ctx.db
    .insertInto("ingested_messages")
    .values({ message_id: "", received: 0 })
    .onConflict((oc) => oc.column("message_id").doNothing())
    .compile().sql;
  return claimOne;
}

/**
 * Uplink message ids already processed. MQTT QoS 1 redelivers, and the DUP flag cannot be
 * trusted (STYLE "Pitfalls"), so ingestion claims each id once.
 */
export function ingestedMessagesRepo(ctx: Ctx): IngestedMessagesRepo {
  return {
    async claim(messageId, received) {
      const r = await ctx.db
        .insertInto("ingested_messages")
        .values({ message_id: messageId, received: received ?? ctx.clock.now() })
        .onConflict((oc) => oc.column("message_id").doNothing())
        .returning("message_id")
        .executeTakeFirst();
      return r !== undefined;
    },
    async claimMany(messageIds, received) {
      const at = received ?? ctx.clock.now();
      const claimed = new Set<string>();
      if (ctx.sqlite !== undefined && ctx.inTx) {
        // The ingestion hot path (once per message): see measurement-insert.ts.
        const statement = ctx.sqlite.prepare(claimSql(ctx));
        for (const id of new Set(messageIds)) {
          if (Number(statement.run([id, at]).changes) === 1) claimed.add(id);
        }
        return claimed;
      }
      for (const ids of chunked([...new Set(messageIds)])) {
        const rows = await ctx.db
          .insertInto("ingested_messages")
          .values(ids.map((message_id) => ({ message_id, received: at })))
          .onConflict((oc) => oc.column("message_id").doNothing())
          .returning("message_id")
          .execute();
        for (const r of rows) claimed.add(r.message_id);
      }
      return claimed;
    },
    async has(messageId) {
      const r = await ctx.db
        .selectFrom("ingested_messages")
        .select("message_id")
        .where("message_id", "=", messageId)
        .executeTakeFirst();
      return r !== undefined;
    },
    async prune(before) {
      let removed = 0;
      // A chunk a statement, so the write lock is held briefly, between ingestion's batches. The
      // ids first, oldest first off the `received` index, then deleted by key: as one
      // `delete … where message_id in (select … limit n)` SQLite may scan the whole table per
      // chunk (a database never analysed: 0.6–1.2 s a chunk at two million claims).
      for (;;) {
        const ids = (
          await ctx.db
            .selectFrom("ingested_messages")
            .select("message_id")
            .where("received", "<", before)
            .orderBy("received")
            .limit(CHUNK)
            .execute()
        ).map((r) => r.message_id);
        if (ids.length > 0) {
          await ctx.db.deleteFrom("ingested_messages").where("message_id", "in", ids).execute();
        }
        removed += ids.length;
        if (ids.length < CHUNK) return removed;
      }
    },
  };
}
