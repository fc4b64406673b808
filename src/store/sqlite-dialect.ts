import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
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
  private readonly connections = new WeakMap<DatabaseConnection, WriteWaitingConnection>();

  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.held = true;
    const inner = await super.acquireConnection();
    let connection = this.connections.get(inner);
    if (connection === undefined) {
      connection = new WriteWaitingConnection(inner, this.settings);
      this.connections.set(inner, connection);
    }
    return connection;
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    const next = this.waiting.shift();
    // The connection passes straight to the next caller (held stays true), or is free.
    if (next === undefined) this.held = false;
    else next();
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const inner = innerOf(connection);
    await beginImmediate((sql) => inner.executeQuery(CompiledQuery.raw(sql)));
    if (connection instanceof WriteWaitingConnection) connection.inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.commitTransaction(innerOf(connection));
    } finally {
      if (connection instanceof WriteWaitingConnection) connection.inTransaction = false;
      announceWriteEnd();
    }
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(innerOf(connection));
    } finally {
      if (connection instanceof WriteWaitingConnection) connection.inTransaction = false;
      announceWriteEnd();
    }
  }
}

const innerOf = (connection: DatabaseConnection): DatabaseConnection =>
  connection instanceof WriteWaitingConnection ? connection.inner : connection;

/**
 * A write outside a transaction (one statement, SQLite's own autocommit) waits for the write
 * lock as a transaction does (beginImmediate), not in SQLite's busy handler, which would block
 * the thread — the API's writes in the main thread, beside the embedded broker and the webhook
 * requests, while ingestion's worker commits a batch. Reads go straight through: in WAL mode
 * they never wait for the writer.
 */
class WriteWaitingConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly settings: SqliteDialectConfig,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction || this.readsOnly(query)) return this.inner.executeQuery(query);
    const run = (sql: string) => this.inner.executeQuery(CompiledQuery.raw(sql));
    await beginImmediate(run);
    try {
      const result = await this.inner.executeQuery<R>(query);
      await run("commit");
      return result;
    } catch (error) {
      await run("rollback").catch(() => undefined);
      throw error;
    } finally {
      announceWriteEnd();
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery(query, chunkSize);
  }

  /** A SELECT, or a statement SQLite says writes nothing (sqlite3_stmt_readonly). */
  private readsOnly(query: CompiledQuery): boolean {
    if (query.query.kind === "SelectQueryNode") return true;
    const database = this.settings.database;
    if (typeof database === "function") return false;
    return (database.prepare(query.sql) as { readonly?: boolean }).readonly === true;
  }
}
