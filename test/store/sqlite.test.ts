import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";
import { storeContract } from "./contract.ts";

storeContract("SQLite :memory:", {
  persistent: false,
  open: async (deps) => ({ store: await openStore("memory", deps) }),
});

/** A temp folder per test; the store file sits in a subfolder openStore must create. */
let dir: string | undefined;
let file = "";
storeContract("SQLite file (WAL)", {
  persistent: true,
  async open(deps) {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-store-"));
    file = join(dir, "nested", "lab.db");
    const spec = `sqlite:${file}`;
    return { store: await openStore(spec, deps), reopen: () => openStore(spec, deps) };
  },
  async cleanup() {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  },
  async rawRows(table) {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare(`select * from "${table}"`).all();
    } finally {
      db.close();
    }
  },
});

describe("SQLite store settings", () => {
  let tmp: string | undefined;
  afterEach(() => {
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
    tmp = undefined;
  });

  it("opens files in WAL mode and lets another connection write meanwhile", async () => {
    tmp = mkdtempSync(join(tmpdir(), "rpmlab-store-"));
    const path = join(tmp, "lab.db");
    const deps = { clock: new VirtualClock({ startMs: 0 }), rng: new Rng("s") };
    const store = await openStore(`sqlite:${path}`, deps);
    await store.accounts.create({ clientDomain: "a", environment: "development" });
    const probe = new Database(path);
    try {
      expect(probe.pragma("journal_mode", { simple: true })).toBe("wal");
      // A second connection can write while the store is open (no long-held lock).
      probe.prepare("update accounts set asr_enabled = 1").run();
    } finally {
      probe.close();
    }
    expect((await store.accounts.getByClientDomain("a"))?.asrEnabled).toBe(true);
    await store.close();
  });

  it("finds a gateway's devices (hardware_uuid__iexact) by index, not by walking the account", async () => {
    tmp = mkdtempSync(join(tmpdir(), "rpmlab-store-"));
    const path = join(tmp, "lab.db");
    const store = await openStore(`sqlite:${path}`, {
      clock: new VirtualClock({ startMs: 0 }),
      rng: new Rng("s"),
    });
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      // The query devices-list.ts builds for the filter, in its list order.
      const plan = db
        .prepare(
          `explain query plan select "devices".* from "devices"
             left join "patients" on "patients"."id" = "devices"."patient_id"
             where "devices"."account_id" = ? and "devices"."hardware_uuid_lc" = ?
             order by "devices"."created", "devices"."id" limit ?`,
        )
        .all("account", "be0000000001", 100)
        .map((row) => (row as { detail: string }).detail);
      expect(plan.find((d) => d.includes(" devices "))).toMatch(/USING INDEX devices_by_hardware/);
      expect(plan.join("\n")).not.toMatch(/TEMP B-TREE/);
    } finally {
      db.close();
    }
  });
});
