import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseStoreSpec, redactStoreSpec } from "../../src/config/store-spec.ts";
import { RpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";

const deps = () => ({ clock: new VirtualClock({ startMs: 0 }), rng: new Rng("open") });

async function rejection(p: Promise<unknown>): Promise<RpmlabError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RpmlabError);
  return error as RpmlabError;
}

describe("store spec strings (DESIGN.md Boundaries)", () => {
  it("parses memory, sqlite:PATH and postgres URLs with an optional schema", () => {
    expect(parseStoreSpec("memory")).toEqual({ kind: "sqlite", path: ":memory:", memory: true });
    expect(parseStoreSpec("sqlite:./.rpmlab/lab.db")).toEqual({
      kind: "sqlite",
      path: "./.rpmlab/lab.db",
      memory: false,
    });
    expect(parseStoreSpec("postgres://postgres@127.0.0.1:5432/test")).toEqual({
      kind: "postgres",
      url: "postgres://postgres@127.0.0.1:5432/test",
      schema: undefined,
    });
    expect(parseStoreSpec("postgresql://u:pw@db:5433/x?schema=lab_1&sslmode=disable")).toEqual({
      kind: "postgres",
      url: "postgresql://u:pw@db:5433/x?sslmode=disable",
      schema: "lab_1",
    });
  });

  it("rejects anything else with E_CONFIG_INVALID naming the spec string", () => {
    for (const bad of ["mysql://x", "sqlite:", "", "Memory", "postgres://h/db?schema=Bad-Name"]) {
      let error: unknown;
      try {
        parseStoreSpec(bad);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(RpmlabError);
      expect((error as RpmlabError).code).toBe("E_CONFIG_INVALID");
      expect((error as RpmlabError).message).toContain(`"${bad}"`);
    }
  });

  it("refuses PostgreSQL's own schemas: pg_… cannot be created, information_schema is the catalogue's", () => {
    for (const schema of ["pg_lab", "pg_catalog", "pg_temp", "information_schema"]) {
      const spec = `postgres://u@db/x?schema=${schema}`;
      let error: unknown;
      try {
        parseStoreSpec(spec);
      } catch (e) {
        error = e;
      }
      expect(error, schema).toBeInstanceOf(RpmlabError);
      expect((error as RpmlabError).code).toBe("E_CONFIG_INVALID");
      expect((error as RpmlabError).message).toContain(`schema "${schema}" is PostgreSQL's own`);
    }
    expect(parseStoreSpec("postgres://u@db/x?schema=lab_pg_1")).toMatchObject({
      schema: "lab_pg_1",
    });
  });

  it("never shows a password", () => {
    expect(redactStoreSpec("postgres://u:hunter2@db/x")).toBe("postgres://u:***@db/x");
    const error = (() => {
      try {
        parseStoreSpec("postgres://u:hunter2@db/x?schema=BAD");
      } catch (e) {
        return e as RpmlabError;
      }
    })();
    expect(error?.message).not.toContain("hunter2");
    // pg takes ?password= as the URL's own; a spec the parser refuses is quoted in its error.
    expect(redactStoreSpec("postgres://u@db/x?schema=lab_1&password=hunter2")).toBe(
      "postgres://u@db/x?schema=lab_1&password=***",
    );
    for (const spec of [
      "POSTGRES://u:hunter2@db/x", // the scheme in capitals
      " postgres://u:hunter2@db/x?schema=BAD", // a blank pasted before it
      "postgres://u:hun/ter2@db/x", // a / left unescaped
      "postgresql://u:hun@ter2@db/x?schema=BAD", // an @ left unescaped
      "postgres://u@db/x?schema=BAD&password=hunter2",
    ]) {
      let message = "";
      try {
        parseStoreSpec(spec);
      } catch (e) {
        message = (e as RpmlabError).message;
      }
      expect(message, spec).toMatch(/^invalid store "/);
      expect(message, spec).not.toMatch(/hun|ter2/);
    }
  });

  it("openStore rejects an unknown spec before touching anything", async () => {
    const error = await rejection(openStore("redis://localhost", deps()));
    expect(error.code).toBe("E_CONFIG_INVALID");
    expect(error.message).toContain("redis://localhost");
  });

  it("reports an unreachable PostgreSQL as E_STORE_UNAVAILABLE", async () => {
    // A port that was free a moment ago: nothing listens there now.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = await rejection(openStore(`postgres://u:hunter2@127.0.0.1:${port}/test`, deps()));
    expect(error.code).toBe("E_STORE_UNAVAILABLE");
    expect(error.message).not.toContain("hunter2");
  });

  it("reports an SQLite path that cannot be a database file as E_STORE_UNAVAILABLE", async () => {
    const error = await rejection(openStore("sqlite:/proc/version/lab.db", deps()));
    expect(error.code).toBe("E_STORE_UNAVAILABLE");
    // A directory that cannot be made: Node's recursive mkdir never returned here.
    const missing = await rejection(openStore("sqlite:/proc/rpmlab-nope/lab.db", deps()));
    expect(missing.code).toBe("E_STORE_UNAVAILABLE");
    expect(missing.message).toContain("mkdir '/proc/rpmlab-nope'");
  });

  it("makes a new SQLite file, and its WAL, readable by its owner only; leaves an existing one's mode", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-store-mode-"));
    try {
      const path = join(dir, "lab", "lab.db");
      const store = await openStore(`sqlite:${path}`, deps());
      await store.accounts.create({ clientDomain: "acme", environment: "development" });
      for (const file of [path, `${path}-wal`]) {
        expect((statSync(file).mode & 0o777).toString(8), file).toBe("600");
      }
      await store.close();
      const shared = join(dir, "shared.db");
      writeFileSync(shared, "");
      chmodSync(shared, 0o640);
      await (await openStore(`sqlite:${shared}`, deps())).close();
      expect((statSync(shared).mode & 0o777).toString(8)).toBe("640");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
