import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type MigrationLockOptions,
  PostgresAdapter,
  PostgresDialect,
  type PostgresDialectConfig,
  PostgresDriver,
  sql,
  type TransactionSettings,
} from "kysely";
import { OwnSchemaIntrospector } from "./postgres-introspector.ts";

/**
 * Kysely's PostgreSQL dialect, with transactions that run one at a time per lab store, as they
 * do on SQLite (BEGIN IMMEDIATE, sqlite-dialect.ts). The store's transactions read, check, then
 * write — "is this patient still there", "which devices are on this gateway", "which readings
 * wait for this device" — and rely on nothing changing in between. Under PostgreSQL's READ
 * COMMITTED with a pool of connections they interleaved: two unlinks of one gateway both
 * unlinked it (two Unlinked webhooks each), readings committed while a device was activated
 * stayed without it, an address PATCH kept the status of an address another PATCH had changed.
 *
 * Each transaction takes a transaction-scoped advisory lock named after the store's schema as
 * it begins, so every following statement sees what the previous holder committed. Stores in
 * other schemas of the same database keep their own lock. Writes outside a transaction are
 * single statements, atomic by themselves.
 *
 * Its start concerns its own schema only: the migrator's look for its tables reads that schema's
 * catalogue (postgres-introspector.ts), and its lock is that schema's (SchemaMigrationLock).
 */
export class SerialPostgresDialect extends PostgresDialect {
  constructor(private readonly settings: PostgresDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new SerialPostgresDriver(this.settings);
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's Dialect interface hands any.
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db);
  }

  override createAdapter(): DialectAdapter {
    return new SchemaMigrationLock();
  }
}

/**
 * Kysely's migrator locks one advisory key for the whole database: a lab starting waited for
 * any other lab of the database (or any Kysely application there) to finish migrating — a
 * data migration over a big lab's measurements holds it for minutes. The key here is named
 * after the schema the migrator's tables are in (kysely-store.ts names it always), so starts
 * of one lab still take turns (`rpmlab serve` and `rpmlab accounts` started together) and
 * other schemas' do not wait.
 */
class SchemaMigrationLock extends PostgresAdapter {
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's DialectAdapter hands any.
  override async acquireMigrationLock(db: Kysely<any>, opts: MigrationLockOptions): Promise<void> {
    // As Kysely's: one round trip, the lock timeout (an hour: a migration that long is stuck,
    // not slow) local to the statement.
    await sql`
      with set_timeout as (select set_config('lock_timeout', '3600000', true))
      select pg_advisory_lock(${migrationLockKey(opts)}) from set_timeout`.execute(db);
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's DialectAdapter hands any.
  override async releaseMigrationLock(db: Kysely<any>, opts: MigrationLockOptions): Promise<void> {
    await sql`select pg_advisory_unlock(${migrationLockKey(opts)})`.execute(db);
  }
}

const migrationLockKey = (opts: MigrationLockOptions) =>
  sql`hashtext(${`rpmlab migrations ${opts.lockTableSchema ?? ""}`})`;

/** The lock's key: the schema the connection's search_path puts first (the store's own). */
const TAKE_STORE_LOCK = CompiledQuery.raw(
  "select pg_advisory_xact_lock(hashtext('rpmlab store ' || current_schema()))",
);

class SerialPostgresDriver extends PostgresDriver {
  override async beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    await super.beginTransaction(connection, settings);
    await connection.executeQuery(TAKE_STORE_LOCK);
  }
}
