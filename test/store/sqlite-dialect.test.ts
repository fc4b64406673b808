import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type Generated, Kysely, sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { ImmediateSqliteDialect } from "../../src/store/sqlite-dialect.ts";
import { BUSY_TIMEOUT_MS } from "../../src/store/sqlite-write-lock.ts";

interface Db {
  log: { id: Generated<number>; caller: number; step: number };
}

describe("ImmediateSqliteDialect: one connection, handed over in arrival order", () => {
  let db: Kysely<Db> | undefined;
  afterEach(async () => {
    await db?.destroy();
    db = undefined;
  });

  it("serves hundreds of queued callers in order, each transaction whole", async () => {
    const kysely = new Kysely<Db>({
      dialect: new ImmediateSqliteDialect({ database: new Database(":memory:") }),
    });
    db = kysely;
    await sql`create table log (id integer primary key, caller integer, step integer)`.execute(
      kysely,
    );
    const insert = (executor: Kysely<Db>, caller: number, step: number) =>
      executor.insertInto("log").values({ caller, step }).execute();
    // Every third caller is a transaction of two inserts with a wait between them: nobody else
    // may write in between, and nobody queued after it may go before it.
    await Promise.all(
      Array.from({ length: 300 }, (_, caller) =>
        caller % 3 === 0
          ? kysely.transaction().execute(async (trx) => {
              await insert(trx, caller, 0);
              await new Promise((resolve) => setImmediate(resolve));
              await insert(trx, caller, 1);
            })
          : insert(kysely, caller, 0),
      ),
    );
    const rows = await kysely.selectFrom("log").select(["caller", "step"]).orderBy("id").execute();
    const expected = Array.from({ length: 300 }, (_, caller) =>
      caller % 3 === 0
        ? [
            { caller, step: 0 },
            { caller, step: 1 },
          ]
        : [{ caller, step: 0 }],
    ).flat();
    expect(rows).toEqual(expected);
  });
});

describe("ImmediateSqliteDialect: waiting for another connection's write lock", () => {
  const opened: { destroy(): Promise<void> | void }[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    for (const db of opened.splice(0).reverse()) await db.destroy();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** A raw connection to a fresh file, set up as open.ts sets up a store's. */
  function raw(file: string): Database.Database {
    const connection = new Database(file);
    connection.pragma("journal_mode = WAL");
    connection.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    opened.push({ destroy: () => void connection.close() });
    return connection;
  }

  function lab(file: string, connection = raw(file)): Kysely<Db> {
    const db = new Kysely<Db>({ dialect: new ImmediateSqliteDialect({ database: connection }) });
    opened.push(db);
    return db;
  }

  async function freshFile(): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-write-lock-"));
    const file = join(dir, "lab.db");
    await sql`create table log (id integer primary key, caller integer, step integer)`.execute(
      lab(file),
    );
    return file;
  }

  /** `caller`'s row inserted (in a transaction, or as one statement), and whether it has ended. */
  function insertWaiting(db: Kysely<Db>, caller: number, alone = false) {
    const insert = { ended: false, done: Promise.resolve() };
    const row = { caller, step: 0 };
    const inserted = alone
      ? db.insertInto("log").values(row).execute()
      : db.transaction().execute((trx) => trx.insertInto("log").values(row).execute());
    insert.done = inserted
      .then(() => undefined)
      .finally(() => {
        insert.ended = true;
      });
    return insert;
  }

  /**
   * A transaction of caller 1 on `db` holding the write lock (its first row inserted) until
   * `release`, then inserting its second row.
   */
  async function holdLock(db: Kysely<Db>) {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let begun!: () => void;
    const holding = new Promise<void>((resolve) => {
      begun = resolve;
    });
    const done = db.transaction().execute(async (trx) => {
      await trx.insertInto("log").values({ caller: 1, step: 0 }).execute();
      begun();
      await held;
      await trx.insertInto("log").values({ caller: 1, step: 1 }).execute();
    });
    await holding;
    return { release, done };
  }

  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
  };

  it("waits without blocking the thread, and begins once the holder in this thread commits", async () => {
    // Two stores on one file in one thread: SQLite's busy handler would have blocked the
    // thread in the second BEGIN, so the first could never commit (SQLITE_BUSY after 5 s).
    const file = await freshFile();
    const first = await holdLock(lab(file));
    const second = lab(file);
    const secondInsert = insertWaiting(second, 2);
    await turns(20);
    expect(secondInsert.ended).toBe(false);
    first.release();
    await Promise.all([first.done, secondInsert.done]);
    const rows = await second.selectFrom("log").select(["caller", "step"]).orderBy("id").execute();
    expect(rows).toEqual([
      { caller: 1, step: 0 },
      { caller: 1, step: 1 },
      { caller: 2, step: 0 },
    ]);
  });

  it("a write outside a transaction waits for the holder's commit without blocking the thread", async () => {
    const file = await freshFile();
    const first = await holdLock(lab(file));
    const second = lab(file);
    const write = insertWaiting(second, 2, true);
    // Reads on another connection do not wait: WAL gives them the last commit.
    expect(await lab(file).selectFrom("log").select("caller").execute()).toEqual([]);
    await turns(20);
    expect(write.ended).toBe(false);
    first.release();
    await Promise.all([first.done, write.done]);
    const rows = await second.selectFrom("log").select(["caller"]).orderBy("id").execute();
    expect(rows).toEqual([{ caller: 1 }, { caller: 1 }, { caller: 2 }]);
  });

  it("begins once another process's connection lets the lock go, which wakes nobody", async () => {
    const file = await freshFile();
    const other = raw(file);
    other.prepare("begin immediate").run();
    other.prepare("insert into log (caller, step) values (1, 0)").run();
    const connection = raw(file);
    const db = lab(file, connection);
    const insert = insertWaiting(db, 2);
    await turns(20);
    expect(insert.ended).toBe(false);
    other.prepare("commit").run();
    await insert.done;
    const rows = await db.selectFrom("log").select(["caller"]).orderBy("id").execute();
    expect(rows).toEqual([{ caller: 1 }, { caller: 2 }]);
    // Writes outside a transaction wait on the connection's busy timeout again.
    expect(connection.pragma("busy_timeout", { simple: true })).toBe(BUSY_TIMEOUT_MS);
  });
});
