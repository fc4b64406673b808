import type BetterSqlite from "better-sqlite3";
import type { Clock } from "../core/clock.ts";
import { createPrivateFile } from "../core/directory.ts";
import { RpmlabError } from "../core/errors.ts";
import { TypedEvents } from "../core/events.ts";
import { MAX_READINGS } from "../mqtt/envelope.ts";
import {
  batchOf,
  checkMax,
  type Outbox,
  type OutboxBatch,
  type OutboxEntry,
  type OutboxEvents,
} from "./outbox.ts";

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
  readonly events = new TypedEvents<OutboxEvents<T>>();
  private readonly insert: Statement;
  private readonly keepAside: Statement;
  private readonly deleteOne: Statement;
  private setAsideCount: number;
  private readonly dropOldest: Statement;
  private readonly oldest: Statement;
  private readonly deleteUpTo: Statement;
  private readonly everything: Statement;
  private readonly countAll: Statement;
  private readonly setMeta: Statement;
  private droppedCount: number;
  private count: number;
  /** The entries it held when closed (the file is no longer read). */
  private heldAtClose: readonly OutboxEntry<T>[] | undefined;

  private constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    readonly capacity: number,
    private readonly incarnation: string,
    private readonly check: ((item: unknown) => string | undefined) | undefined,
  ) {
    this.insert = db.prepare("INSERT INTO entries (queued_at, item) VALUES (?, ?)");
    this.dropOldest = db.prepare(
      "DELETE FROM entries WHERE seq IN (SELECT seq FROM entries ORDER BY seq LIMIT ?) RETURNING seq, queued_at, item",
    );
    this.oldest = db.prepare(
      "SELECT seq, queued_at, item FROM entries WHERE seq <= ? ORDER BY seq LIMIT ?",
    );
    this.deleteUpTo = db.prepare("DELETE FROM entries WHERE seq <= ?");
    this.everything = db.prepare("SELECT seq, queued_at, item FROM entries ORDER BY seq");
    this.keepAside = db.prepare(
      "INSERT OR REPLACE INTO set_aside (seq, queued_at, item, fault) VALUES (?, ?, ?, ?)",
    );
    this.deleteOne = db.prepare("DELETE FROM entries WHERE seq = ?");
    this.countAll = db.prepare("SELECT count(*) AS n FROM entries").pluck();
    this.setMeta = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    this.count = this.countAll.get() as number;
    this.droppedCount = Number(meta(db, "dropped") ?? 0);
    this.setAsideCount = Number(meta(db, "set_aside") ?? 0);
  }

  /** `newIncarnation` names a new file's entries (incarnationOf); a reopened file keeps its own. */
  static async open<T>(
    path: string,
    clock: Clock,
    capacity: number,
    newIncarnation: () => string,
    check?: (item: unknown) => string | undefined,
  ): Promise<SqliteOutbox<T>> {
    const { default: Sqlite } = await import("better-sqlite3");
    let db: Database | undefined;
    try {
      // Readings waiting to be sent: the owner's only, as the lab's store (directory.ts).
      createPrivateFile(path);
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
        CREATE TABLE IF NOT EXISTS set_aside (
          seq INTEGER PRIMARY KEY,
          queued_at INTEGER,
          item,
          fault TEXT NOT NULL
        );
      `);
      let incarnation = meta(db, "incarnation");
      if (incarnation === undefined) {
        incarnation = newIncarnation();
        db.prepare("INSERT INTO meta (key, value) VALUES ('incarnation', ?)").run(incarnation);
      }
      return new SqliteOutbox<T>(db, clock, capacity, incarnation, check);
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

  get setAside(): number {
    return this.setAsideCount;
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
    let dropped: Row[] = [];
    const entry = this.db.transaction(() => {
      const seq = Number(this.insert.run(queuedAt, text).lastInsertRowid);
      const excess = this.count + 1 - this.capacity;
      if (excess > 0) {
        dropped = this.dropOldest.all(excess) as Row[];
        this.setMeta.run("dropped", String(this.droppedCount + excess));
        this.droppedCount += excess;
      }
      this.count = Math.min(this.count + 1, this.capacity);
      return { seq, queuedAt, item };
    })();
    // After the commit: a listener sees the outbox as it now is.
    if (dropped.length > 0) this.events.emit("dropped", { entries: readable<T>(dropped) });
    return entry;
  }

  /**
   * An entry that does not read back as an item (a damaged file, or one edited by hand) is set
   * aside, not thrown: one bad row must not stop every reading queued after it.
   */
  take(max = MAX_READINGS, upToSeq = Number.MAX_SAFE_INTEGER): OutboxBatch<T> | null {
    checkMax(max);
    for (;;) {
      const rows = this.oldest.all(Math.min(upToSeq, Number.MAX_SAFE_INTEGER), max) as Row[];
      const entries: OutboxEntry<T>[] = [];
      for (const row of rows) {
        const read = this.read(row);
        if (read === undefined) break;
        entries.push(read);
      }
      if (entries.length === rows.length) return batchOf(this.incarnation, entries);
    }
  }

  /** The row as an entry, or undefined once it is set aside. */
  private read(row: Row): OutboxEntry<T> | undefined {
    let fault: string | undefined;
    let item: unknown;
    if (typeof row.item !== "string" || typeof row.queued_at !== "number") {
      fault = typeof row.item !== "string" ? "item: not text" : "queued_at: not a number";
    } else {
      try {
        item = JSON.parse(row.item);
        const field = this.check?.(item);
        if (field !== undefined) fault = `item.${field}: not what a queued item holds`;
      } catch (error) {
        fault = `item: not JSON (${(error as Error).message})`;
      }
    }
    if (fault === undefined) {
      return { seq: row.seq, queuedAt: row.queued_at as number, item: item as T };
    }
    this.putAside(row, fault);
    return undefined;
  }

  private putAside(row: Row, fault: string): void {
    this.db.transaction(() => {
      this.keepAside.run(row.seq, row.queued_at, row.item, fault);
      this.deleteOne.run(row.seq);
      this.setMeta.run("set_aside", String(this.setAsideCount + 1));
    })();
    this.setAsideCount++;
    this.count--;
    const error = new RpmlabError(
      "E_OUTBOX_UNAVAILABLE",
      `outbox ${this.db.name}, entry ${row.seq}: ${fault}; kept in its set_aside table, not sent`,
      { field: fault.slice(0, fault.indexOf(":")), value: row.seq },
    );
    this.events.emit("setAside", { seq: row.seq, error });
  }

  /** Read from the file: the entries an earlier process queued are there too. */
  held(): OutboxEntry<T>[] {
    if (this.heldAtClose !== undefined) return [...this.heldAtClose];
    const entries: OutboxEntry<T>[] = [];
    for (const row of this.everything.all() as Row[]) {
      // A row that does not read back is set aside (see take()), not held.
      const entry = this.read(row);
      if (entry !== undefined) entries.push(entry);
    }
    return entries;
  }

  remove(batch: OutboxBatch<T>): number {
    const removed = this.deleteUpTo.run(batch.lastSeq).changes;
    this.count -= removed;
    return removed;
  }

  /** What it holds still reads after (as size does): a replaced unit's, once its modem stopped. */
  close(): void {
    if (!this.db.open) return;
    this.heldAtClose = this.held();
    this.db.close();
  }
}

interface Row {
  readonly seq: number;
  readonly queued_at: unknown;
  readonly item: unknown;
}

function meta(db: Database, key: string): string | undefined {
  const row = db.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(key);
  return row === undefined ? undefined : String(row);
}

/** Dropped rows as entries, those that read back as JSON (a damaged one is only counted). */
function readable<T>(rows: readonly Row[]): OutboxEntry<T>[] {
  const entries: OutboxEntry<T>[] = [];
  for (const row of rows) {
    if (typeof row.item !== "string" || typeof row.queued_at !== "number") continue;
    try {
      entries.push({ seq: row.seq, queuedAt: row.queued_at, item: JSON.parse(row.item) as T });
    } catch {
      // Not JSON: nothing to say which reading it was.
    }
  }
  return entries;
}
