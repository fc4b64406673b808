import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Driver,
  type Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
  PostgresDriver,
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
 * Its introspection (the migrator's look for its tables at every start) reads the store's own
 * schema only: postgres-introspector.ts.
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
}

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
