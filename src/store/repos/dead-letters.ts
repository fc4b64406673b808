import { type Expression, type Selectable, type SqlBool, sql } from "kysely";
import { TOPIC_ROOT } from "../../mqtt/topics.ts";
import {
  CHUNK,
  type Ctx,
  countOf,
  equalsIgnoringCase,
  invalid,
  keepableText,
  paged,
} from "../context.ts";
import { readBool, readNum, writeBytes } from "../dialect.ts";
import type { DeadLettersTable } from "../schema.ts";
import type { DeadLettersRepo } from "../store.ts";
import type { DeadLetterFilter, DeadLetterRow } from "../types-ingest.ts";

function toDeadLetterRow(r: Selectable<DeadLettersTable>): DeadLetterRow {
  return {
    id: readNum(r.id),
    topic: r.topic,
    payload: new Uint8Array(r.payload),
    reason: r.reason,
    received: readNum(r.received),
    messageId: r.message_id,
    holdsClaim: readBool(r.holds_claim),
  };
}

/**
 * Length as substr() counts on both dialects: characters (code points), where a JS string's
 * length counts UTF-16 units, two for a character beyond the BMP (a topic's emoji).
 */
function chars(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * `topic` starts with `prefix`, exactly: substr() is case-sensitive on both dialects, where
 * SQLite's LIKE folds ASCII case (MQTT topics are case-sensitive, [MQTT-4.7.3-1]).
 */
function startsWith(prefix: string): Expression<SqlBool> {
  return sql<SqlBool>`substr(${sql.ref("topic")}, 1, ${chars(prefix)}) = ${prefix}`;
}

/**
 * `topic` is one of `source`'s (src/mqtt/topics.ts: `rpm/v1/gw/{uuid}/…` or `rpm/v1/cell/{imei}/…`),
 * its id in any case: a topic that spells a gateway uuid in lower case is dead-lettered for
 * exactly that (E_MQTT_TOPIC), and must be found by the id it names. The root is matched
 * exactly; the id folded as `search` folds, the same on both dialects (a dead-lettered topic
 * may name any text, not only hex ids and IMEIs).
 */
function fromSource(ctx: Ctx, kind: "gw" | "cell", source: string): Expression<SqlBool> {
  const root = `${TOPIC_ROOT}/${kind}/`;
  const id = `${source}/`;
  const named = sql`substr(${sql.ref("topic")}, ${root.length + 1}, ${chars(id)})`;
  return sql<SqlBool>`(${startsWith(root)} and ${equalsIgnoringCase(ctx, named, id)})`;
}

/** Uplink messages ingestion could not use, kept byte for byte with the reason. */
export function deadLettersRepo(ctx: Ctx): DeadLettersRepo {
  const { db, d } = ctx;
  const matching = (filter: DeadLetterFilter) => {
    let q = db.selectFrom("dead_letters");
    if (filter.topicPrefix !== undefined) q = q.where(startsWith(filter.topicPrefix));
    if (filter.source !== undefined) {
      const source = filter.source;
      // The topic map's senders: gateways and direct-cellular devices.
      q = q.where((eb) => eb.or([fromSource(ctx, "gw", source), fromSource(ctx, "cell", source)]));
    }
    if (filter.messageId !== undefined) q = q.where("message_id", "=", filter.messageId);
    if (filter.since !== undefined) q = q.where("received", ">=", filter.since);
    if (filter.until !== undefined) q = q.where("received", "<", filter.until);
    return q;
  };
  return {
    async add(input) {
      if (!(input.payload instanceof Uint8Array)) {
        throw invalid("payload must be bytes", { field: "payload" });
      }
      const r = await db
        .insertInto("dead_letters")
        .values({
          topic: keepableText(input.topic),
          payload: writeBytes(input.payload),
          reason: keepableText(input.reason),
          received: input.received ?? ctx.clock.now(),
          message_id: input.messageId ?? null,
          holds_claim: d.toBool(input.holdsClaim ?? false),
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
    async list(filter = {}, page) {
      const q = matching(filter).selectAll();
      // By id: the order rows were added in (received times can tie within a batch).
      const ordered = q.orderBy("id", filter.newestFirst === true ? "desc" : "asc");
      const rows = await paged(ordered, page).execute();
      const total = page?.count ? await countOf(q) : undefined;
      return { rows: rows.map(toDeadLetterRow), ...(total === undefined ? {} : { total }) };
    },
    async delete(id) {
      const result = await db.deleteFrom("dead_letters").where("id", "=", id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async deleteMany(filter) {
      // A chunk at a time, read then deleted by key (as the claims' retention does): one
      // statement over millions of rows would hold the one SQLite writer for as long.
      let total = 0;
      for (;;) {
        const ids = (await matching(filter).select("id").limit(CHUNK).execute()).map((r) => r.id);
        if (ids.length === 0) return total;
        await db.deleteFrom("dead_letters").where("id", "in", ids).execute();
        total += ids.length;
      }
    },
  };
}
