import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";
import { postgresHarness } from "../support/postgres.ts";

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
  });
}
