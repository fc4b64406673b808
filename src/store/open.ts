import { dirname } from "node:path";
import { Kysely } from "kysely";
import { parseStoreSpec, redactStoreSpec, type StoreSpec } from "../config/store-spec.ts";
import type { Clock } from "../core/clock.ts";
import { createPrivateFile, ensureDirectory } from "../core/directory.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { postgresDialect, sqliteDialect } from "./dialect.ts";
import { createKyselyStore } from "./kysely-store.ts";
import { SerialPostgresDialect } from "./postgres-dialect.ts";
import type { Database } from "./schema.ts";
import { ImmediateSqliteDialect } from "./sqlite-dialect.ts";
import { withStatementCache } from "./sqlite-statements.ts";
import { BUSY_TIMEOUT_MS } from "./sqlite-write-lock.ts";
import type { Store } from "./store.ts";

export interface OpenStoreOptions {
  readonly clock: Clock;
  /** Source of public ids (UUIDs); the store forks its own stream from it. */
  readonly rng: Rng;
  /** Run migrations before returning (default true). */
  readonly migrate?: boolean;
  /** Errors of idle PostgreSQL connections (the next query reports its own error anyway). */
  readonly onBackgroundError?: (error: unknown) => void;
}

/**
 * Opens the store a spec string names (DESIGN.md "Boundaries"): `memory`, `sqlite:PATH`,
 * `postgres://…[?schema=NAME]`. Drivers load lazily, so SQLite users never load pg and back.
 */
export async function openStore(spec: string, opts: OpenStoreOptions): Promise<Store> {
  const parsed = parseStoreSpec(spec);
  const describe = redactStoreSpec(spec);
  const store =
    parsed.kind === "sqlite"
      ? await openSqlite(parsed, describe, opts)
      : await openPostgres(parsed, describe, opts);
  if (opts.migrate !== false) {
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  return store;
}

async function openSqlite(
  spec: Extract<StoreSpec, { kind: "sqlite" }>,
  describe: string,
  opts: OpenStoreOptions,
): Promise<Store> {
  const { default: BetterSqlite } = await import("better-sqlite3");
  let sqlite: InstanceType<typeof BetterSqlite>;
  try {
    if (!spec.memory) {
      ensureDirectory(dirname(spec.path));
      // Patients' names, addresses and readings, webhook auth keys and signing secrets.
      createPrivateFile(spec.path);
    }
    sqlite = new BetterSqlite(spec.path);
    // WAL: readers never block the writer; NORMAL is durable across application crashes in
    // WAL mode; busy_timeout waits for another connection's write lock instead of failing at
    // once (transactions wait in sqlite-write-lock.ts instead, without blocking the thread).
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = NORMAL");
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // 64 MiB page cache (default 2 MiB): the measurement indexes take random inserts from
    // many devices at once; keeping their hot pages cached about doubles ingestion on files.
    sqlite.pragma("cache_size = -65536");
    // Reads map the file instead of copying each page from the OS cache: about 15 % off a
    // measurement page's count and page queries (test/bench/measurements-page.ts). Writes and
    // the WAL are unchanged. 1 GiB of address space, not memory: pages map as they are read.
    sqlite.pragma("mmap_size = 1073741824");
    // Checkpoint the WAL every 10,000 pages (about 40 MiB) instead of 1,000: each checkpoint
    // syncs the database file, and under ingestion load they cost about a fifth of the insert
    // time (test/bench/ingest.ts). Readers are unaffected; the WAL file grows that large.
    sqlite.pragma("wal_autocheckpoint = 10000");
    // Off by default in SQLite: needed for ON DELETE SET NULL / CASCADE (spec 4.1 delete).
    sqlite.pragma("foreign_keys = ON");
    // SQLite's own lower() folds ASCII only: `search` (hwi-devices, supply-requests) lowers
    // column and pattern alike, so "Zoë" never matched "zoë" here while it did on PostgreSQL.
    // JavaScript's folding is Unicode's, as PostgreSQL's on a UTF-8 database, but for İ: its
    // full mapping is i + U+0307, so "İlker" was never found searching "ilker" here while
    // PostgreSQL (the simple mapping, i) found it. Final sigma: context.ts containsIgnoringCase.
    sqlite.function("lower", { deterministic: true }, (text: unknown) =>
      typeof text === "string" ? text.replaceAll("\u0130", "i").toLowerCase() : text,
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RpmlabError(
      "E_STORE_UNAVAILABLE",
      `cannot open ${describe}: ${reason}`,
      { store: describe },
      error,
    );
  }
  const database = withStatementCache(sqlite);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database }) });
  return createKyselyStore({
    db,
    dialect: sqliteDialect,
    clock: opts.clock,
    rng: opts.rng,
    describe,
    sqlite: database,
  });
}

/**
 * The connection string, and the server options that put the store's schema first in the search
 * path. pg lets a URL's own `?options=` override the pool's: a URL carrying any (a statement
 * timeout, say) lost the search path, and the lab's tables were created in public while its
 * migration records went to the schema. The URL's options come first, so `?schema=` wins over a
 * search_path among them, as the README says.
 */
function connectionOf(spec: Extract<StoreSpec, { kind: "postgres" }>): {
  connectionString: string;
  options?: string;
} {
  if (spec.schema === undefined) return { connectionString: spec.url };
  const url = new URL(spec.url);
  const own = url.searchParams.get("options");
  url.searchParams.delete("options");
  const searchPath = `-c search_path=${spec.schema}`;
  return {
    connectionString: url.href,
    options: own === null || own.trim() === "" ? searchPath : `${own} ${searchPath}`,
  };
}

/** OIDs of int8 (bigint, count(*)) in PostgreSQL's catalogue. */
const INT8_OID = 20;

async function openPostgres(
  spec: Extract<StoreSpec, { kind: "postgres" }>,
  describe: string,
  opts: OpenStoreOptions,
): Promise<Store> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({
    ...connectionOf(spec),
    // Per pool, not pg.types.setTypeParser: that would change every pg user in the process.
    // Epoch ms and ids fit in a double; pg's default hands int8 back as a string.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID && format !== "binary"
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
    connectionTimeoutMillis: 10_000,
    max: 10,
  });
  // A connection the server ends (a restart, pg_terminate_backend) errors on its client; with no
  // listener that error crashes the process. pg-pool listens only while a client is idle, and
  // re-emits that on the pool: a client checked out for a transaction, between its statements,
  // has nobody else. Its transaction fails on its next statement and is retried or reported.
  pool.on("connect", (client) => {
    client.on("error", (error) => opts.onBackgroundError?.(error));
  });
  pool.on("error", () => undefined); // the idle client's own listener above reported it
  const db = new Kysely<Database>({ dialect: new SerialPostgresDialect({ pool }) });
  return createKyselyStore({
    db,
    dialect: postgresDialect,
    clock: opts.clock,
    rng: opts.rng,
    schema: spec.schema,
    describe,
  });
}
