import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from "kysely";

/**
 * Kysely's SQLite dialect, with transactions that take the write lock as they begin (BEGIN
 * IMMEDIATE). Two connections write to a lab's SQLite file: the API's and the ingestion
 * worker's (src/ingest/worker-processor.ts). A deferred transaction that reads, and then writes
 * after the other connection committed, fails at once with SQLITE_BUSY (its snapshot is stale,
 * so busy_timeout cannot help); an immediate one waits for the lock, then reads fresh rows.
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }
}
