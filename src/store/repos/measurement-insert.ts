import { CompiledQuery, type Insertable } from "kysely";
import { CHUNK, type Ctx } from "../context.ts";
import { readNum } from "../dialect.ts";
import type { MeasurementsTable } from "../schema.ts";
import { dedupeKey } from "./measurement-rows.ts";

type Row = Insertable<MeasurementsTable>;

export const keyOfRow = (r: Pick<Row, "source" | "metric" | "timestamp" | "dedupe_index">) =>
  dedupeKey({
    source: r.source,
    metric: r.metric,
    timestamp: readNum(r.timestamp),
    dedupeIndex: readNum(r.dedupe_index),
  });

/** The one-row insert's SQL by dialect and column list, compiled by Kysely once. */
const oneRowSql = new Map<string, string>();

function oneRow(ctx: Ctx, row: Row): string {
  const key = `${ctx.d.kind}:${Object.keys(row).join(",")}`;
  let sql = oneRowSql.get(key);
  if (sql === undefined) {
    sql = ctx.db
      .insertInto("measurements")
      .values(row)
      .onConflict((oc) => oc.columns(["source", "metric", "timestamp", "dedupe_index"]).doNothing())
      .returning("id")
      .compile().sql;
    oneRowSql.set(key, sql);
  }
  return sql;
}

/**
 * Inserts rows whose dedupe keys are distinct, skipping those already stored; returns the id
 * of each row stored, by dedupe key. SQLite runs in this process: one prepared one-row
 * statement (kept by sqlite-statements.ts) run per row costs less than multi-row statements,
 * which Kysely builds and SQLite parses anew for every row count (test/bench/ingest.ts). On
 * PostgreSQL every statement is a round trip: multi-row statements of CHUNK rows.
 */
export async function insertDistinct(ctx: Ctx, rows: readonly Row[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  if (rows.length === 0) return ids;
  if (ctx.d.kind === "sqlite") {
    const sql = oneRow(ctx, rows[0]!);
    for (const row of rows) {
      const result = await ctx.db.executeQuery<{ id: unknown }>(
        CompiledQuery.raw(sql, Object.values(row)),
      );
      const stored = result.rows[0];
      if (stored !== undefined) ids.set(keyOfRow(row), readNum(stored.id));
    }
    return ids;
  }
  for (let start = 0; start < rows.length; start += CHUNK) {
    // Only the key comes back: the rest of each row is the input (no blobs read back).
    const stored = await ctx.db
      .insertInto("measurements")
      .values(rows.slice(start, start + CHUNK))
      .onConflict((oc) => oc.columns(["source", "metric", "timestamp", "dedupe_index"]).doNothing())
      .returning(["id", "source", "metric", "timestamp", "dedupe_index"])
      .execute();
    for (const r of stored) ids.set(keyOfRow(r), readNum(r.id));
  }
  return ids;
}
