import type { SqliteDatabase, SqliteStatement } from "kysely";

/** Distinct statements kept prepared (multi-row inserts make one per row count). */
const CACHE_SIZE = 500;

/**
 * The better-sqlite3 database as Kysely sees it, with prepared statements kept by SQL text.
 * Kysely's SQLite driver prepares every query it runs: on the ingestion path (the same few
 * statements thousands of times a second) preparing cost as much as executing. A statement is
 * reusable once its run ends, and Kysely runs one statement at a time per connection (its
 * single-connection mutex), so sharing one per SQL text is safe. Least recently used go first.
 */
export function withStatementCache(db: {
  close(): void;
  prepare(sql: string): SqliteStatement;
}): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => {
      cache.clear();
      db.close();
    },
    prepare(sql) {
      let statement = cache.get(sql);
      if (statement !== undefined) {
        cache.delete(sql);
      } else {
        statement = db.prepare(sql);
        if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}
