import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { redactStoreSpec } from "../../src/config/store-spec.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";
import { storeContract } from "./contract.ts";

/** DESIGN.md "Testing": the local PostgreSQL (trust auth); CI sets CI and must run this. */
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
    describe("Store contract: PostgreSQL", () => {
      it("runs on CI", () => {
        throw new Error(`${reason} (CI must run the PostgreSQL store suite)`);
      });
    });
  } else {
    console.warn(`${reason}: skipped`);
    describe.skip(`Store contract: PostgreSQL (${reason}: skipped)`, () => {
      it("needs PostgreSQL", () => undefined);
    });
  }
} else {
  // One uniquely named schema per test, dropped after it: runs never see each other's rows.
  const run = `rpmlab_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  let seq = 0;
  let schema = "";
  const specFor = (name: string) => `${url}${url.includes("?") ? "&" : "?"}schema=${name}`;

  afterAll(async () => {
    const { rows } = await admin.query<{ nspname: string }>(
      "select nspname from pg_namespace where nspname like $1",
      [`${run}%`],
    );
    for (const { nspname } of rows) await admin.query(`drop schema "${nspname}" cascade`);
    await admin.end();
  });

  storeContract(`PostgreSQL (${shown})`, {
    persistent: true,
    async open(deps) {
      schema = `${run}_${++seq}`;
      const spec = specFor(schema);
      return { store: await openStore(spec, deps), reopen: () => openStore(spec, deps) };
    },
    async cleanup() {
      await admin.query(`drop schema if exists "${schema}" cascade`);
    },
    async rawRows(table) {
      return (await admin.query(`select * from "${schema}"."${table}"`)).rows;
    },
  });

  describe("PostgreSQL store specifics", () => {
    it("creates its tables in the schema the spec names, with int8 read as numbers", async () => {
      const name = `${run}_specifics`;
      const deps = { clock: new VirtualClock({ startMs: 1_729_051_800_000 }), rng: new Rng("s") };
      const store = await openStore(specFor(name), deps);
      try {
        const { rows } = await admin.query<{ table_name: string }>(
          "select table_name from information_schema.tables where table_schema = $1 order by 1",
          [name],
        );
        expect(rows.map((r) => r.table_name)).toContain("measurements");
        const a = await store.accounts.create({ clientDomain: "a", environment: "production" });
        expect(a.created).toBe(1_729_051_800_000);
        const types = await admin.query<{ data_type: string }>(
          "select data_type from information_schema.columns where table_schema = $1 and table_name = 'accounts' and column_name = 'created'",
          [name],
        );
        expect(types.rows[0]?.data_type).toBe("bigint");
      } finally {
        await store.close();
        await admin.query(`drop schema if exists "${name}" cascade`);
      }
    });
  });
}
