import { type Kysely, Migrator, type SqliteDatabase, sql } from "kysely";
import type { Clock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { type Ctx, chooseSearchFold, StoreIds } from "./context.ts";
import { type Dialect, readNum, toStoreError } from "./dialect.ts";
import { migrationProvider } from "./migrations/index.ts";
import { QueryTemplates } from "./query-templates.ts";
import { buildRepositories, transactionRepositories } from "./repositories.ts";
import type { Database } from "./schema.ts";
import type { Store } from "./store.ts";

export interface KyselyStoreOptions {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  readonly clock: Clock;
  readonly rng: Rng;
  /** PostgreSQL schema to create and migrate into (search_path already points at it). */
  readonly schema?: string | undefined;
  /** How to name the database in messages (the spec string, password redacted). */
  readonly describe: string;
  /** SQLite: the database Kysely runs on, for the ingestion hot path (Ctx.sqlite). */
  readonly sqlite?: SqliteDatabase;
}

/**
 * PostgreSQL without `?schema=`: the schema the search path creates tables in (public, as a
 * rule). Named to the migrator, which otherwise took a kysely_migration table in any schema of
 * the database for its own: in a database shared with a `?schema=` lab (or any Kysely app),
 * opening the public schema failed with `relation "kysely_migration_lock" does not exist`.
 */
async function currentSchema(db: Kysely<Database>): Promise<string | undefined> {
  const { rows } = await sql<{ name: string | null }>`select current_schema() as name`.execute(db);
  return rows[0]?.name ?? undefined;
}

/**
 * Looked up before CREATE SCHEMA IF NOT EXISTS, which checks the role may create schemas in the
 * database before it checks whether the schema is there: a role given its own schema by a DBA,
 * and no CREATE on the database, could not start the lab (`permission denied for database`).
 */
async function schemaExists(db: Kysely<Database>, schema: string): Promise<boolean> {
  const { rows } =
    await sql`select 1 from pg_catalog.pg_namespace where nspname = ${schema}`.execute(db);
  return rows.length > 0;
}

/** The one Store implementation: same queries on SQLite and PostgreSQL through Kysely. */
export function createKyselyStore(opts: KyselyStoreOptions): Store {
  const { db, dialect: d, schema } = opts;
  const ids = new StoreIds(opts.rng);
  const ctx: Ctx = {
    db,
    d,
    clock: opts.clock,
    ids,
    inTx: false,
    templates: new QueryTemplates(),
    fold: {},
    ...(opts.sqlite === undefined ? {} : { sqlite: opts.sqlite }),
  };
  let closed = false;

  const unavailable = (what: string, error: unknown) => {
    const mapped = toStoreError(d, error, `${what} ${opts.describe}`);
    if (mapped instanceof RpmlabError) return mapped;
    const reason = error instanceof Error ? error.message : String(error);
    return new RpmlabError(
      "E_STORE_UNAVAILABLE",
      `${what} ${opts.describe}: ${reason}`,
      { store: opts.describe },
      error,
    );
  };

  return {
    kind: d.kind,
    ...buildRepositories(ctx),
    async migrate() {
      let applied: string[];
      try {
        if (schema !== undefined && !(await schemaExists(db, schema))) {
          // Two processes opening one new schema at once (two `rpmlab serve`, or serve and
          // `rpmlab accounts`, started together): IF NOT EXISTS checks before it inserts, so
          // the slower one failed on pg_namespace's unique index. The schema is there then; the
          // migrator's own lock serialises the rest.
          await sql`create schema if not exists ${sql.id(schema)}`
            .execute(db)
            .catch((error: unknown) => {
              if (d.classify(error) !== "unique") throw error;
            });
        }
        const tableSchema = schema ?? (d.kind === "postgres" ? await currentSchema(db) : undefined);
        const migrator = new Migrator({
          db,
          provider: migrationProvider(d),
          ...(tableSchema === undefined ? {} : { migrationTableSchema: tableSchema }),
        });
        const { error, results } = await migrator.migrateToLatest();
        if (error !== undefined) throw error;
        applied = (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
        await chooseSearchFold(ctx);
        if (!ids.ready) {
          // A new id stream per open (see StoreIds).
          const row = await db
            .updateTable("store_meta")
            .set((eb) => ({ value: eb("value", "+", 1) }))
            .where("key", "=", "id_epoch")
            .returning("value")
            .executeTakeFirstOrThrow();
          ids.start(readNum(row.value));
        }
      } catch (error) {
        throw unavailable("cannot migrate", error);
      }
      return applied;
    },
    async transaction(fn) {
      try {
        return await db
          .transaction()
          .execute((trx) => fn(transactionRepositories({ ...ctx, db: trx, inTx: true })));
      } catch (error) {
        throw toStoreError(d, error, "transaction");
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      if (d.kind === "sqlite") {
        // SQLite's advice for long-lived connections: refresh planner statistics on close.
        await sql`pragma optimize`.execute(db).catch(() => undefined);
      }
      await db.destroy();
    },
  };
}
