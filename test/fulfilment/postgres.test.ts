import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, it } from "vitest";
import { redactStoreSpec } from "../../src/config/store-spec.ts";
import { openStore } from "../../src/store/open.ts";
import { fulfilmentSuite } from "./suite.ts";

/**
 * The device services on PostgreSQL (DESIGN.md "Testing": the local server, trust auth), one
 * fresh schema per test as the store contract does. Skipped, saying why, when it is not there;
 * CI (which sets CI) must run it.
 */
const url = process.env.RPMLAB_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const shown = redactStoreSpec(url);

async function connect(): Promise<pg.Client | string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("select 1");
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    return error instanceof Error ? error.message || String(error) : String(error);
  }
}

const admin = await connect();

if (typeof admin === "string") {
  const reason = `PostgreSQL not reachable at ${shown}: ${admin}`;
  if (process.env.CI) {
    describe("device services on PostgreSQL", () => {
      it("runs on CI", () => {
        throw new Error(`${reason} (CI must run the PostgreSQL suites)`);
      });
    });
  } else {
    console.warn(`${reason}: skipped`);
    describe.skip(`device services on PostgreSQL (${reason}: skipped)`, () => {
      it("needs PostgreSQL", () => undefined);
    });
  }
} else {
  const run = `rpmlab_fulfilment_${process.pid}_${randomBytes(4).toString("hex")}`;
  let seq = 0;
  let schema = "";
  afterAll(async () => {
    const { rows } = await admin.query<{ nspname: string }>(
      "select nspname from pg_namespace where nspname like $1",
      [`${run}%`],
    );
    for (const { nspname } of rows) await admin.query(`drop schema "${nspname}" cascade`);
    await admin.end();
  });
  fulfilmentSuite(`PostgreSQL (${shown})`, {
    open(deps) {
      schema = `${run}_${++seq}`;
      return openStore(`${url}${url.includes("?") ? "&" : "?"}schema=${schema}`, deps);
    },
    async cleanup() {
      await admin.query(`drop schema if exists "${schema}" cascade`);
    },
  });
}
