/**
 * The local PostgreSQL for the suites that run on it (DESIGN.md "Testing": 127.0.0.1:5432,
 * database `test`, trust auth; RPMLAB_TEST_POSTGRES_URL overrides). Each test gets a fresh
 * schema, dropped after it. When the server is unreachable a suite is skipped with the reason
 * printed, except on CI (which sets CI), where it fails: CI must run it.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, it } from "vitest";
import { redactStoreSpec } from "../../src/config/store-spec.ts";

export const POSTGRES_URL =
  process.env.RPMLAB_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const POSTGRES_SHOWN = redactStoreSpec(POSTGRES_URL);

/**
 * Creating (migrating) and dropping schemas is serialised across test workers. It was needed
 * while Kysely's migrator read every schema of the database at a store's start, and failed with
 * "schema … does not exist" when another worker dropped one in the middle of that query; a
 * store reads its own schema only now (src/store/postgres-introspector.ts, tested without this
 * lock in test/store/postgres-startup.test.ts). Kept for the suites written before.
 */
const SCHEMA_LOCK = 0x72706d6c; // "rpml"

export interface PostgresHarness {
  /** A connection for assertions on raw rows; closed by `close()`. */
  readonly admin: pg.Client;
  /** A store spec string for a new, uniquely named schema. */
  nextSpec(): { spec: string; schema: string };
  /** Runs `fn` (which creates or migrates a schema) while holding the schema lock. */
  locked<T>(fn: () => Promise<T>): Promise<T>;
  dropSchema(schema: string): Promise<void>;
  /** Drops every schema this harness made, and closes the connection. */
  close(): Promise<void>;
}

async function connect(): Promise<pg.Client | string> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("select 1");
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    return error instanceof Error ? error.message || String(error) : String(error);
  }
}

/**
 * Connects, or declares the suite skipped (locally) or failing (on CI) with the reason, and
 * returns undefined.
 */
export async function postgresHarness(suite: string): Promise<PostgresHarness | undefined> {
  const admin = await connect();
  if (typeof admin === "string") {
    const reason = `PostgreSQL not reachable at ${POSTGRES_SHOWN}: ${admin}`;
    if (process.env.CI) {
      describe(suite, () => {
        it("runs on CI", () => {
          throw new Error(`${reason} (CI must run the PostgreSQL suites)`);
        });
      });
    } else {
      console.warn(`${suite}: ${reason}: skipped`);
      describe.skip(`${suite} (${reason}: skipped)`, () => {
        it("needs PostgreSQL", () => undefined);
      });
    }
    return undefined;
  }
  const run = `rpmlab_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  let seq = 0;
  const locked = async <T>(fn: () => Promise<T>): Promise<T> => {
    await admin.query("select pg_advisory_lock($1)", [SCHEMA_LOCK]);
    try {
      return await fn();
    } finally {
      await admin.query("select pg_advisory_unlock($1)", [SCHEMA_LOCK]);
    }
  };
  const dropSchema = (schema: string) =>
    locked(async () => {
      await admin.query(`drop schema if exists "${schema}" cascade`);
    });
  return {
    admin,
    locked,
    dropSchema,
    nextSpec() {
      const schema = `${run}_${++seq}`;
      const sep = POSTGRES_URL.includes("?") ? "&" : "?";
      return { spec: `${POSTGRES_URL}${sep}schema=${schema}`, schema };
    },
    async close() {
      const { rows } = await admin.query<{ nspname: string }>(
        "select nspname from pg_namespace where nspname like $1",
        [`${run}%`],
      );
      for (const { nspname } of rows) await dropSchema(nspname);
      await admin.end();
    },
  };
}
