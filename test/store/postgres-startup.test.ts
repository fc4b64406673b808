import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";
import { POSTGRES_URL, postgresHarness } from "../support/postgres.ts";

const pgh = await postgresHarness("PostgreSQL start-up beside other schemas");

/** A statement that reads PostgreSQL's catalogue (the migrator's look for its tables). */
const readsCatalogue = (text: string) => /pg_catalog\.|pg_namespace/.test(text);

if (pgh !== undefined) {
  const { admin } = pgh;
  afterAll(() => pgh.close());

  describe("PostgreSQL start-up beside other schemas", () => {
    /**
     * Another lab (or anyone) dropping its schema while this one starts. The drop is placed
     * exactly where it hurt, rather than hoped for in a loop (the window is narrow: 300
     * catalogue reads beside a create-and-drop loop never hit it): each catalogue read of the
     * starting store runs on a snapshot taken while schema B still stood, B dropped after
     * it. The rows it scans still show B; any function that looks B up by name then failed
     * with `schema "…" does not exist`, as `rpmlab serve` could beside a test run or a second
     * lab being reset.
     */
    it("starts while another client drops a schema in the middle of its catalogue read", async () => {
      const { spec, schema } = pgh.nextSpec();
      const other = pgh.nextSpec().schema;
      const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
      let raced = 0;
      const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(async function (
        this: pg.Client,
        ...args: unknown[]
      ) {
        const first = args[0] as string | { text?: string };
        const text = typeof first === "string" ? first : (first?.text ?? "");
        if (this === admin || !readsCatalogue(text) || this.getTransactionStatus() !== "I") {
          return query.apply(this, args);
        }
        raced++;
        await admin.query(`create schema "${other}"`);
        await admin.query(`create table "${other}".readings (id serial primary key)`);
        await query.call(this, "begin isolation level repeatable read");
        await query.call(this, "select 1"); // the snapshot: B is there
        await admin.query(`drop schema "${other}" cascade`);
        try {
          return await query.apply(this, args);
        } finally {
          await query.call(this, "commit");
        }
      } as never);
      const deps = { clock: new VirtualClock({ startMs: 1_729_051_800_000 }), rng: new Rng("r") };
      try {
        const store = await openStore(spec, deps).finally(() => spy.mockRestore());
        try {
          expect(raced).toBeGreaterThan(0);
          await store.accounts.create({ clientDomain: "a", environment: "production" });
          expect((await store.accounts.list()).map((a) => a.clientDomain)).toEqual(["a"]);
        } finally {
          await store.close();
        }
      } finally {
        spy.mockRestore();
        await pgh.dropSchema(other);
        await pgh.dropSchema(schema);
      }
    });

    it("starts while a lab in another schema of the database is in the middle of its migrations", async () => {
      const b = pgh.nextSpec();
      const a = pgh.nextSpec();
      const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
      let migrating!: () => void;
      const bMigrating = new Promise<void>((resolve) => {
        migrating = resolve;
      });
      let finish!: () => void;
      const bMayFinish = new Promise<void>((resolve) => {
        finish = resolve;
      });
      let paused = false;
      // Lab B stops inside its migration transaction, its migration lock held (a long data
      // migration on a big lab), until lab A has started.
      const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(async function (
        this: pg.Client,
        ...args: unknown[]
      ) {
        const first = args[0] as string | { text?: string };
        const text = typeof first === "string" ? first : (first?.text ?? "");
        if (
          !paused &&
          this !== admin &&
          this.getTransactionStatus() === "T" &&
          text.includes("kysely_migration")
        ) {
          paused = true;
          migrating();
          await bMayFinish;
        }
        return query.apply(this, args);
      } as never);
      const deps = (seed: string) => ({
        clock: new VirtualClock({ startMs: 1_729_051_800_000 }),
        rng: new Rng(seed),
      });
      const openingB = openStore(b.spec, deps("b"));
      try {
        await bMigrating;
        const storeA = await openStore(a.spec, deps("a"));
        try {
          await storeA.accounts.create({ clientDomain: "a", environment: "production" });
        } finally {
          await storeA.close();
        }
        finish();
        const storeB = await openingB;
        try {
          expect(await storeB.accounts.list()).toEqual([]);
        } finally {
          await storeB.close();
        }
      } finally {
        finish();
        spy.mockRestore();
        await openingB.then((store) => store.close()).catch(() => undefined);
        await pgh.dropSchema(a.schema);
        await pgh.dropSchema(b.schema);
      }
    });

    it("keeps its tables in ?schema= when the URL carries PostgreSQL options of its own", async (ctx) => {
      // A database of its own: the tables went to public, beside whatever labs public holds.
      const database = `rpmlab_test_${process.pid}_${randomBytes(4).toString("hex")}_options`;
      try {
        await admin.query(`create database "${database}"`);
      } catch (error) {
        ctx.skip(`cannot create a database here: ${error}`);
      }
      const plain = new URL(POSTGRES_URL);
      plain.pathname = `/${database}`;
      const url = (options: string) => {
        const u = new URL(plain);
        u.searchParams.set("schema", "lab_1");
        u.searchParams.set("options", options);
        return u.href;
      };
      const deps = { clock: new VirtualClock({ startMs: 1_729_051_800_000 }), rng: new Rng("o") };
      const other = new pg.Client({ connectionString: plain.href });
      try {
        const store = await openStore(url("-c statement_timeout=60000"), deps);
        try {
          await store.accounts.create({ clientDomain: "a", environment: "production" });
        } finally {
          await store.close();
        }
        await other.connect();
        const { rows } = await other.query<{ schema: string; n: number }>(
          "select table_schema as schema, count(*)::int as n from information_schema.tables where table_schema in ('public', 'lab_1') group by 1",
        );
        expect(rows.map((r) => r.schema)).toEqual(["lab_1"]);
        const accounts = await other.query("select client_domain from lab_1.accounts");
        expect(accounts.rows).toEqual([{ client_domain: "a" }]);
        // The URL's own options still reach the server.
        await expect(openStore(url("-c statement_timeout=soon"), deps)).rejects.toThrow(
          /statement_timeout/,
        );
      } finally {
        await other.end();
        await admin.query(`drop database if exists "${database}" with (force)`);
      }
    });

    it("starts as a role that may use its schema but not create schemas in the database", async (ctx) => {
      // A DBA's set-up: the schema made for the lab's role, no CREATE on the database.
      const name = `rpmlab_test_${process.pid}_${randomBytes(4).toString("hex")}_role`;
      try {
        await admin.query(`create database "${name}"`);
        await admin.query(`create role "${name}" login`);
      } catch (error) {
        await admin.query(`drop database if exists "${name}"`);
        ctx.skip(`cannot create a database and a role here: ${error}`);
      }
      const plain = new URL(POSTGRES_URL);
      plain.pathname = `/${name}`;
      const dba = new pg.Client({ connectionString: plain.href });
      try {
        await dba.connect();
        await dba.query(`revoke create on database "${name}" from public`);
        await dba.query(`create schema lab_1 authorization "${name}"`);
        const spec = new URL(plain);
        spec.username = name;
        spec.password = "";
        const asRole = new pg.Client({ connectionString: spec.href });
        const refused = await asRole.connect().then(
          () => undefined,
          (error: unknown) => error,
        );
        await asRole.end().catch(() => undefined);
        if (refused !== undefined) ctx.skip(`cannot log in as a new role here: ${refused}`);
        spec.searchParams.set("schema", "lab_1");
        const deps = { clock: new VirtualClock({ startMs: 1_729_051_800_000 }), rng: new Rng("d") };
        const store = await openStore(spec.href, deps);
        try {
          await store.accounts.create({ clientDomain: "a", environment: "production" });
          expect((await store.accounts.list()).map((a) => a.clientDomain)).toEqual(["a"]);
        } finally {
          await store.close();
        }
      } finally {
        await dba.end();
        await admin.query(`drop database if exists "${name}" with (force)`);
        await admin.query(`drop role if exists "${name}"`);
      }
    });
  });
}
