import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from "kysely";
import { announceWriteEnd, beginImmediate } from "./sqlite-write-lock.ts";

/**
 * Kysely's SQLite dialect, with transactions that take the write lock as they begin (BEGIN
 * IMMEDIATE). Two connections write to a lab's SQLite file: the API's and the ingestion
 * worker's (src/ingest/worker-processor.ts). A deferred transaction that reads, and then writes
 * after the other connection committed, fails at once with SQLITE_BUSY (its snapshot is stale,
 * so busy_timeout cannot help); an immediate one waits for the lock, then reads fresh rows.
 * The webhook dispatch worker's connection writes too. The wait is beginImmediate's
 * (sqlite-write-lock.ts): woken by the holder's commit, never sleeping in SQLite's busy handler.
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

/**
 * Kysely's SQLite driver hands its single connection over through a mutex that wakes every
 * waiter at each release (each re-checks and waits again): N queries queued cost N² wake-ups.
 * A thousand gateways checking in at once queue thousands (adoption, whitelists, downlinks), and
 * the lab spent most of its time there (test/bench/gateway-fleet.ts). This queue lets one caller
 * through at a time, in arrival order, so kysely's own mutex never has a waiter.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  private readonly waiting: (() => void)[] = [];
  private held = false;

  override async acquireConnection(): Promise<DatabaseConnection> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.held = true;
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    const next = this.waiting.shift();
    // The connection passes straight to the next caller (held stays true), or is free.
    if (next === undefined) this.held = false;
    else next();
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await beginImmediate((sql) => connection.executeQuery(CompiledQuery.raw(sql)));
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.commitTransaction(connection);
    } finally {
      announceWriteEnd();
    }
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } finally {
      announceWriteEnd();
    }
  }
}
