import Database from "better-sqlite3";
import { type Generated, Kysely, sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { ImmediateSqliteDialect } from "../../src/store/sqlite-dialect.ts";

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
