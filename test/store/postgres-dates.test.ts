import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { toIsoMicros } from "../../src/core/time.ts";
import { postgresDialect } from "../../src/store/dialect.ts";
import { POSTGRES_URL, postgresHarness } from "../support/postgres.ts";

const suite = "PostgreSQL: epoch-ms columns written as the API writes times";
const pgh = await postgresHarness(suite);

if (pgh !== undefined) {
  const db = new Kysely<Record<string, never>>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: POSTGRES_URL, max: 1 }) }),
  });
  afterAll(async () => {
    await db.destroy();
    await pgh.close();
  });

  describe(suite, () => {
    // What a supply request's date search matches against (supply-requests.ts): the text must be
    // the API's own. A millisecond count times an interval went through a double: from about the
    // year 4253 its microseconds drifted (…59.124992 for …59.125).
    it.each([
      ["the year 9999's last millisecond but one", 253_402_300_799_125],
      ["the year 1", -62_135_596_799_875],
      ["a lab's day", 1_772_409_600_123],
      ["before 1970", -1_234_567_890],
    ])("%s", async (_, ms) => {
      const { rows } = await sql<{ text: string }>`
        select ${postgresDialect.isoText("v")} as text from (select ${ms}::bigint as v) as t`.execute(
        db,
      );
      expect(rows[0]?.text).toBe(toIsoMicros(ms));
    });
  });
}
