import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import { POSTGRES_SHOWN, POSTGRES_URL, postgresHarness } from "../support/postgres.ts";
import { PROPERTY_KEYS_BY_CODE_POINT } from "./contract/devices.ts";
import { storeContract } from "./contract.ts";

const pgh = await postgresHarness("Store contract: PostgreSQL");

if (pgh !== undefined) {
  const { admin } = pgh;
  let schema = "";
  afterAll(() => pgh.close());

  storeContract(`PostgreSQL (${POSTGRES_SHOWN})`, {
    persistent: true,
    async open(deps) {
      const next = pgh.nextSpec();
      schema = next.schema;
      const open = () => pgh.locked(() => openStore(next.spec, deps));
      return { store: await open(), reopen: open };
    },
    cleanup: () => pgh.dropSchema(schema),
    async rawRows(table) {
      return (await admin.query(`select * from "${schema}"."${table}"`)).rows;
    },
  });

  describe("PostgreSQL store specifics", () => {
    it("creates its tables in the schema the spec names, with int8 read as numbers", async () => {
      const { spec, schema: name } = pgh.nextSpec();
      const deps = { clock: new VirtualClock({ startMs: 1_729_051_800_000 }), rng: new Rng("s") };
      const store = await pgh.locked(() => openStore(spec, deps));
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
        await pgh.dropSchema(name);
      }
    });

    it("outlives its connection cut between a transaction's statements: that transaction fails, the next works", async () => {
      const { spec, schema: name } = pgh.nextSpec();
      const errors: unknown[] = [];
      let reported!: () => void;
      const report = new Promise<void>((resolve) => {
        reported = resolve;
      });
      const deps = {
        clock: new VirtualClock({ startMs: 1_729_051_800_000 }),
        rng: new Rng("t"),
        onBackgroundError: (error: unknown) => {
          errors.push(error);
          reported();
        },
      };
      const store = await pgh.locked(() => openStore(spec, deps));
      try {
        let inside!: () => void;
        const begun = new Promise<void>((resolve) => {
          inside = resolve;
        });
        let cut!: () => void;
        const afterCut = new Promise<void>((resolve) => {
          cut = resolve;
        });
        const tx = store.transaction(async (t) => {
          await t.accounts.create({ clientDomain: "a", environment: "production" });
          inside();
          await afterCut;
          await t.accounts.create({ clientDomain: "b", environment: "production" });
        });
        await begun;
        // The backend holding this store's transaction lock (postgres-dialect.ts), as an
        // administrator or a server restart would end it.
        const { rows } = await admin.query<{ pid: number }>(
          "select pid from pg_locks where locktype = 'advisory' and granted and objid::bigint = (hashtext($1)::bigint & 4294967295)",
          [`rpmlab store ${name}`],
        );
        expect(rows).toHaveLength(1);
        await admin.query("select pg_terminate_backend($1)", [rows[0]!.pid]);
        await report;
        cut();
        await expect(tx).rejects.toThrow();
        expect(String(errors[0])).toMatch(/terminat/);
        await store.accounts.create({ clientDomain: "c", environment: "production" });
        expect((await store.accounts.getByClientDomain("a")) === null).toBe(true);
        expect((await store.accounts.getByClientDomain("c"))?.clientDomain).toBe("c");
      } finally {
        await store.close();
        await pgh.dropSchema(name);
      }
    });

    it("opens one new schema from several processes at once (two serves started together)", async () => {
      const { spec, schema: name } = pgh.nextSpec();
      const deps = (seed: string) => ({
        clock: new VirtualClock({ startMs: 1_729_051_800_000 }),
        rng: new Rng(seed),
      });
      // Separate pools, as separate processes have: each creates the schema and migrates.
      const opened = await pgh.locked(() =>
        Promise.allSettled(["p1", "p2", "p3"].map((seed) => openStore(spec, deps(seed)))),
      );
      try {
        const refused = opened.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
        expect(refused).toEqual([]);
        const stores = opened.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
        await stores[0]!.accounts.create({ clientDomain: "a", environment: "production" });
        expect((await stores[2]!.accounts.list()).map((a) => a.clientDomain)).toEqual(["a"]);
      } finally {
        for (const r of opened) if (r.status === "fulfilled") await r.value.close();
        await pgh.dropSchema(name);
      }
    });

    /**
     * Stores in a database of their own, created with `locale` (PostgreSQL fixes collation and
     * ctype per database, not per schema), opened by `fn` in its public schema or another; the
     * test is skipped, saying why, when the server cannot create one.
     */
    async function inDatabase(
      ctx: { skip(note?: string): never },
      locale: string,
      fn: (
        open: (schema?: string) => Promise<Store>,
        run: (statement: string) => Promise<void>,
      ) => Promise<void>,
    ): Promise<void> {
      const database = `rpmlab_test_${process.pid}_${randomBytes(4).toString("hex")}_own`;
      try {
        await admin.query(
          `create database "${database}" template template0 encoding 'UTF8' ${locale}`,
        );
      } catch (error) {
        ctx.skip(`cannot create a database with ${locale} here: ${error}`);
      }
      const opened: Store[] = [];
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${database}`;
      /** A statement run in that database, as an administrator would. */
      const run = async (statement: string) => {
        const client = new pg.Client({ connectionString: url.href });
        await client.connect();
        try {
          await client.query(statement);
        } finally {
          await client.end();
        }
      };
      const open = async (schema?: string) => {
        const spec = new URL(url);
        if (schema !== undefined) spec.searchParams.set("schema", schema);
        const deps = { clock: new VirtualClock({ startMs: 1_729_051_800_000 }), rng: new Rng("c") };
        const store = await openStore(spec.href, deps);
        opened.push(store);
        return store;
      };
      try {
        await fn(open, run);
      } finally {
        for (const store of opened) await store.close();
        await admin.query(`drop database if exists "${database}" with (force)`);
      }
    }

    it("opens the public schema of a database where another schema holds a lab (README --store)", async (ctx) => {
      await inDatabase(ctx, "", async (open) => {
        const other = await open("team_a");
        await other.accounts.create({ clientDomain: "team-a", environment: "production" });
        const store = await open();
        await store.accounts.create({ clientDomain: "mine", environment: "production" });
        expect((await store.accounts.list()).map((a) => a.clientDomain)).toEqual(["mine"]);
        const again = await open();
        expect((await again.accounts.list()).map((a) => a.clientDomain)).toEqual(["mine"]);
      });
    });

    it("orders text as SQLite does on a database whose collation sorts otherwise (en-US)", async (ctx) => {
      // The official PostgreSQL image creates en_US.utf8 databases; CI's `test` may be C.
      await inDatabase(ctx, "locale 'C' locale_provider icu icu_locale 'en-US'", async (open) => {
        const store = await open();
        const a = await store.accounts.create({ clientDomain: "a", environment: "production" });
        const d = await store.devices.create(a.id, {
          name: "Vendor BPM - Wide Range",
          sensorCode: "10",
          hardwareUuid: "297056120BD7",
          status: "Dropshipped",
        });
        for (const key of [...PROPERTY_KEYS_BY_CODE_POINT].reverse()) {
          await store.deviceProperties.set(d.id, key, "v");
        }
        const keys = (await store.deviceProperties.list(d.id)).map((p) => p.key);
        expect(keys).toEqual(PROPERTY_KEYS_BY_CODE_POINT);
      });
    });

    it("search ignores case beyond ASCII on a database whose ctype is C (lower() folds ASCII only)", async (ctx) => {
      const { rows } = await admin.query(
        "select 1 from pg_collation where collname in ('und-x-icu', 'C.utf8', 'C.UTF-8')",
      );
      if (rows.length === 0) ctx.skip("this server has neither ICU nor a C.UTF-8 collation");
      await inDatabase(ctx, "locale 'C'", async (open) => {
        const { patient, found } = await patientsWithScales(await open());
        const zoe = await patient("p-e", "Zoë Ünïcode");
        const nikos = await patient("p-gr", "ΝΙΚΟΣ ΠΑΠΑΣ");
        const ilker = await patient("p-tr", "İlker Işık");
        expect(await found("zoë")).toEqual([zoe]);
        expect(await found("ZOË ÜNÏ")).toEqual([zoe]);
        expect(await found("zoe")).toEqual([]);
        expect(await found("Νικος")).toEqual([nikos]);
        expect(await found("ilker")).toEqual([ilker]);
        expect(await found("İLKER")).toEqual([ilker]);
      });
    });

    it("search finds İ as i, as SQLite does, on a database whose own collation is ICU (lower() gives i + U+0307)", async (ctx) => {
      await inDatabase(ctx, "locale 'C' locale_provider icu icu_locale 'en-US'", async (open) => {
        const { patient, found } = await patientsWithScales(await open());
        const ilker = await patient("p-tr", "İlker Işık");
        expect(await found("ilker")).toEqual([ilker]);
        expect(await found("İLKER")).toEqual([ilker]);
        expect(await found("i̇lker")).toEqual([]);
      });
    });

    it("search finds İ as i and ΝΙΚΟΣ as Νικος on an ICU database of a server without glibc's C.UTF-8 (Alpine's)", async (ctx) => {
      await inDatabase(
        ctx,
        "locale 'C' locale_provider icu icu_locale 'en-US'",
        async (open, run) => {
          // What a server whose C library has no C.UTF-8 offers (musl: the official Alpine image).
          await run(`drop collation if exists "C.utf8"`);
          await run(`drop collation if exists "C.UTF-8"`);
          const { patient, found } = await patientsWithScales(await open());
          const ilker = await patient("p-tr", "İlker Işık");
          const nikos = await patient("p-gr", "ΝΙΚΟΣ ΠΑΠΑΣ");
          expect(await found("ilker")).toEqual([ilker]);
          expect(await found("İLKER")).toEqual([ilker]);
          expect(await found("Νικος")).toEqual([nikos]);
          expect(await found("νικοσ")).toEqual([nikos]);
        },
      );
    });

    it("search ignores case beyond ASCII on a database whose ctype is C, on a server without glibc's C.UTF-8", async (ctx) => {
      await inDatabase(ctx, "locale 'C'", async (open, run) => {
        const { rows } = await admin.query(
          "select 1 from pg_collation where collname = 'und-x-icu'",
        );
        if (rows.length === 0) ctx.skip("this server has no ICU collations");
        await run(`drop collation if exists "C.utf8"`);
        await run(`drop collation if exists "C.UTF-8"`);
        const store = await open();
        const a = await store.accounts.create({ clientDomain: "a", environment: "production" });
        const p = await store.patients.create(a.id, { externalId: "p-e", name: "ZOË ÜNÏCODE" });
        await store.devices.create(a.id, {
          name: "Vendor Scale",
          sensorCode: "34",
          status: "Active",
          patientId: p.id,
        });
        const found = async (search: string) =>
          (await store.devices.list(a.id, { search })).rows.map((d) => d.patientId);
        expect(await found("zoë ünï")).toEqual([p.id]);
      });
    });

    it("keeps JSON as written: a webhook body's keys stay in their order (json, not jsonb)", async () => {
      const { spec, schema: name } = pgh.nextSpec();
      const deps = { clock: new VirtualClock({ startMs: 1_729_051_800_000 }), rng: new Rng("j") };
      const store = await pgh.locked(() => openStore(spec, deps));
      try {
        const a = await store.accounts.create({ clientDomain: "a", environment: "production" });
        const body = { zeta: 1, action: "created", patient: { name: "Ann", city: null } };
        await store.webhookOutbox.add({ accountId: a.id, event: "PATIENT", body });
        const raw = await admin.query<{ text: string }>(
          `select payload::text as text from "${name}".webhook_outbox`,
        );
        expect(JSON.stringify(JSON.parse(raw.rows[0]!.text).body)).toBe(JSON.stringify(body));
        const [entry] = await store.webhookOutbox.take(1);
        expect(JSON.stringify(entry)).toContain(JSON.stringify(body));
        const { rows } = await admin.query<{ data_type: string }>(
          "select distinct data_type from information_schema.columns where table_schema = $1 and data_type like 'json%'",
          [name],
        );
        expect(rows.map((r) => r.data_type)).toEqual(["json"]);
      } finally {
        await store.close();
        await pgh.dropSchema(name);
      }
    });
  });
}

/**
 * An account on `store` whose patients each get a scale: `patient` adds one (its id back), and
 * `found` is the patients whose devices a `search` lists.
 */
async function patientsWithScales(store: Store) {
  const a = await store.accounts.create({ clientDomain: "a", environment: "production" });
  return {
    patient: async (externalId: string, name: string) => {
      const p = await store.patients.create(a.id, { externalId, name });
      await store.devices.create(a.id, {
        name: "Vendor Scale",
        sensorCode: "34",
        status: "Active",
        patientId: p.id,
      });
      return p.id;
    },
    found: async (search: string) =>
      (await store.devices.list(a.id, { search })).rows.map((d) => d.patientId),
  };
}
