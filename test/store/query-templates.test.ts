import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import { param, QueryTemplates } from "../../src/store/query-templates.ts";

interface Db {
  t: { id: number; kind: string; at: number };
}

describe("QueryTemplates: queries built once per shape, run with each call's values", () => {
  let db: Kysely<Db>;

  beforeEach(async () => {
    db = new Kysely<Db>({ dialect: new SqliteDialect({ database: new Database(":memory:") }) });
    await db.schema
      .createTable("t")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("kind", "text")
      .addColumn("at", "integer")
      .execute();
    await db
      .insertInto("t")
      .values([
        { id: 1, kind: "a", at: 10 },
        { id: 2, kind: "b", at: 20 },
        { id: 3, kind: "a", at: 30 },
      ])
      .execute();
  });

  afterEach(() => db.destroy());

  it("builds a shape once and binds every call's own values, in the SQL's order", async () => {
    const templates = new QueryTemplates();
    let builds = 0;
    const byKind = (values: { kind: string; from: number }) =>
      templates.run(
        db,
        "by kind from",
        () => {
          builds++;
          // The values are bound in the opposite order of their names in the call.
          return db
            .selectFrom("t")
            .select("id")
            .where("at", ">=", param<number>("from"))
            .where("kind", "=", param<string>("kind"))
            .orderBy("id");
        },
        values,
      );
    expect(await byKind({ kind: "a", from: 0 })).toEqual([{ id: 1 }, { id: 3 }]);
    expect(await byKind({ kind: "a", from: 20 })).toEqual([{ id: 3 }]);
    expect(await byKind({ kind: "b", from: 0 })).toEqual([{ id: 2 }]);
    expect(builds).toBe(1);
  });

  it("refuses a shape that binds a literal, which later calls would replay", async () => {
    const templates = new QueryTemplates();
    const error = await templates
      .run(db, "literal", () => db.selectFrom("t").select("id").where("kind", "=", "a"), {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpmlabError);
    expect((error as RpmlabError).code).toBe("E_USAGE");
  });
});
