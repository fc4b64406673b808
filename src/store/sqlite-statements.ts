import type BetterSqlite from "better-sqlite3";
import type { SqliteDatabase, SqliteStatement } from "kysely";

/** Distinct statements kept prepared (multi-row inserts make one per row count). */
const CACHE_SIZE = 500;

type Row = Record<string, unknown>;

/**
 * The better-sqlite3 database as Kysely sees it, with prepared statements kept by SQL text.
 * Kysely's SQLite driver prepares every query it runs: on the ingestion path (the same few
 * statements thousands of times a second) preparing cost as much as executing. A statement is
 * reusable once its run ends, and Kysely runs one statement at a time per connection (its
 * single-connection mutex), so sharing one per SQL text is safe. Least recently used go first.
 * Statements that return rows give them as rowReader builds them.
 */
export function withStatementCache(db: BetterSqlite.Database): SqliteDatabase {
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
        const prepared = db.prepare(sql);
        statement = prepared.reader ? rowReader(prepared) : prepared;
        if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/**
 * A statement that returns rows, reading them as arrays (better-sqlite3's raw mode) and making
 * each row's object with a function written for its columns. better-sqlite3 builds an object
 * row property by property, which costs more than the query: a 15-column gateway row 7.7 µs
 * against 5.0 µs, a 25-column one 12.1 µs against 5.5 µs (select by a unique key, :memory:).
 * Each check-in reads its gateway's row back, each webhook body its measurements' rows.
 * The objects are the same: columns in order, a repeated name taking the last value.
 */
function rowReader(statement: BetterSqlite.Statement): SqliteStatement & { readonly: boolean } {
  statement.raw(true);
  const build = objectBuilder(statement.columns().map((c) => c.name));
  return {
    reader: true,
    // better-sqlite3's own (sqlite3_stmt_readonly): a SELECT, unlike an INSERT … RETURNING.
    readonly: statement.readonly,
    all: (parameters) => (statement.all(parameters) as unknown[][]).map(build),
    run: (parameters) => statement.run(parameters),
    *iterate(parameters) {
      for (const values of statement.iterate(parameters)) yield build(values as unknown[]);
    },
  };
}

/**
 * `(values) => ({ name0: values[0], … })` as an object literal: its objects share one shape
 * from the first, where adding the properties one at a time was measured 2× slower at 25
 * columns. The names are quoted with JSON.stringify: a column name is never code.
 */
function objectBuilder(names: readonly string[]): (values: unknown[]) => Row {
  const fields = names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(", ");
  return new Function("values", `return { ${fields} };`) as (values: unknown[]) => Row;
}
