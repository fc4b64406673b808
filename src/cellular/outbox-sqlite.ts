import type BetterSqlite from "better-sqlite3";
import type { Clock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import { MAX_READINGS } from "../mqtt/envelope.ts";
import { batchOf, checkMax, type Outbox, type OutboxBatch, type OutboxEntry } from "./outbox.ts";

type Database = BetterSqlite.Database;
type Statement = BetterSqlite.Statement;

/**
 * The outbox in one SQLite file per gateway or device. Why SQLite and not a JSON-lines file:
 * queuing an item, dropping the oldest when full and counting the drop must happen together
 * or not at all, and a process killed mid-write must leave a readable file. A SQLite
 * transaction gives both (WAL: a killed writer's half transaction is rolled back on the next
 * open; synchronous=NORMAL loses nothing to a process kill, only possibly to a power cut), with
 * no torn-line recovery or compaction code of our own. better-sqlite3 is already the lab's
 * store driver, and it is synchronous, so enqueue() is durable once it returns.
 */
export class SqliteOutbox<T> implements Outbox<T> {
  private readonly insert: Statement;
  private readonly dropOldest: Statement;
  private readonly oldest: Statement;
  private readonly deleteUpTo: Statement;
  private readonly countAll: Statement;
  private readonly setMeta: Statement;
  private droppedCount: number;
  private count: number;

  private constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    readonly capacity: number,
    private readonly incarnation: string,
  ) {
    this.insert = db.prepare("INSERT INTO entries (queued_at, item) VALUES (?, ?)");
    this.dropOldest = db.prepare(
      "DELETE FROM entries WHERE seq IN (SELECT seq FROM entries ORDER BY seq LIMIT ?)",
    );
    this.oldest = db.prepare(
      "SELECT seq, queued_at, item FROM entries WHERE seq <= ? ORDER BY seq LIMIT ?",
    );
    this.deleteUpTo = db.prepare("DELETE FROM entries WHERE seq <= ?");
    this.countAll = db.prepare("SELECT count(*) AS n FROM entries").pluck();
    this.setMeta = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    this.count = this.countAll.get() as number;
    this.droppedCount = Number(meta(db, "dropped") ?? 0);
  }

  /** `newIncarnation` names a new file's entries (incarnationOf); a reopened file keeps its own. */
  static async open<T>(
    path: string,
    clock: Clock,
    capacity: number,
    newIncarnation: () => string,
  ): Promise<SqliteOutbox<T>> {
    const { default: Sqlite } = await import("better-sqlite3");
    let db: Database | undefined;
    try {
      db = new Sqlite(path);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      // AUTOINCREMENT: a sequence number is never reused, even after the newest entry leaves.
      db.exec(`
        CREATE TABLE IF NOT EXISTS entries (
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          queued_at INTEGER NOT NULL,
          item TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      `);
      let incarnation = meta(db, "incarnation");
      if (incarnation === undefined) {
        incarnation = newIncarnation();
        db.prepare("INSERT INTO meta (key, value) VALUES ('incarnation', ?)").run(incarnation);
      }
      return new SqliteOutbox<T>(db, clock, capacity, incarnation);
    } catch (error) {
      db?.close();
      throw new RpmlabError(
        "E_OUTBOX_UNAVAILABLE",
        `cannot open the outbox ${path}: ${(error as Error).message}`,
        { field: "outbox", value: path },
        error,
      );
    }
  }

  get size(): number {
    return this.count;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  /** Throws E_OUTBOX_UNAVAILABLE when the file cannot take it (a full disk): nothing changes. */
  enqueue(item: T): OutboxEntry<T> {
    const queuedAt = this.clock.now();
    const text = JSON.stringify(item);
    try {
      return this.append(queuedAt, text, item);
    } catch (error) {
      throw new RpmlabError(
        "E_OUTBOX_UNAVAILABLE",
        `cannot write to the outbox ${this.db.name}: ${(error as Error).message}`,
        { field: "outbox", value: this.db.name },
        error,
      );
    }
  }

  private append(queuedAt: number, text: string, item: T): OutboxEntry<T> {
    return this.db.transaction(() => {
      const seq = Number(this.insert.run(queuedAt, text).lastInsertRowid);
      const excess = this.count + 1 - this.capacity;
      if (excess > 0) {
        this.dropOldest.run(excess);
        this.setMeta.run("dropped", String(this.droppedCount + excess));
        this.droppedCount += excess;
      }
      this.count = Math.min(this.count + 1, this.capacity);
      return { seq, queuedAt, item };
    })();
  }

  take(max = MAX_READINGS, upToSeq = Number.MAX_SAFE_INTEGER): OutboxBatch<T> | null {
    checkMax(max);
    const rows = this.oldest.all(Math.min(upToSeq, Number.MAX_SAFE_INTEGER), max) as {
      seq: number;
      queued_at: number;
      item: string;
    }[];
    return batchOf(
      this.incarnation,
      rows.map((r) => ({ seq: r.seq, queuedAt: r.queued_at, item: JSON.parse(r.item) as T })),
    );
  }

  remove(batch: OutboxBatch<T>): number {
    const removed = this.deleteUpTo.run(batch.lastSeq).changes;
    this.count -= removed;
    return removed;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

function meta(db: Database, key: string): string | undefined {
  const row = db.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(key);
  return row === undefined ? undefined : String(row);
}
