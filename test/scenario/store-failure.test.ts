import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { loadScenario } from "../../src/scenario/load.ts";
import { renderText } from "../../src/scenario/report.ts";
import { runScenario } from "../../src/scenario/runner.ts";
import { type OpenStoreOptions, openStore } from "../../src/store/open.ts";
import type { Store, StoreRepositories } from "../../src/store/store.ts";
import { runCli } from "../catalogue/cli-io.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/scenarios/store-faults.yaml", import.meta.url));

/**
 * The lab's store, opened as usual, whose measurement inserts fail while `fails(attempt)` says
 * so (attempt counts from 1): what a PostgreSQL server that went away looks like to ingestion.
 */
function failingInserts(
  fails: (attempt: number) => boolean,
  error: (spec: string) => Error = (spec) =>
    new RpmlabError(
      "E_STORE_UNAVAILABLE",
      "insert into measurements: connection terminated unexpectedly",
      { store: spec },
    ),
) {
  let attempts = 0;
  const counts = { failed: 0 };
  const open = async (spec: string, options: OpenStoreOptions): Promise<Store> => {
    const store = await openStore(spec, options);
    const tx = (inner: StoreRepositories): StoreRepositories =>
      new Proxy(inner, {
        get(target, key) {
          const value = Reflect.get(target, key, target);
          if (key !== "measurements") return value;
          const measurements = value as StoreRepositories["measurements"];
          return new Proxy(measurements, {
            get(repo, name) {
              const method = Reflect.get(repo, name, repo);
              if (name !== "insertMany" || typeof method !== "function") {
                return typeof method === "function" ? method.bind(repo) : method;
              }
              return (...args: unknown[]) => {
                if (fails(++attempts)) {
                  counts.failed++;
                  throw error(spec);
                }
                return method.apply(repo, args);
              };
            },
          });
        },
      });
    return new Proxy(store, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key === "transaction") {
          return <T>(fn: (repos: StoreRepositories) => Promise<T>) =>
            target.transaction((repos) => fn(tx(repos)));
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  return { open, counts };
}

describe("a run whose store fails", () => {
  it("ends with the store's error when every measurement insert fails", async () => {
    const store = failingInserts(() => true);
    const error = await runScenario(loadScenario(FIXTURE), {
      openStore: store.open,
      storeFailureLimitMs: 1000,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RpmlabError);
    const { code, message, details } = error as RpmlabError;
    expect(code).toBe("E_SCENARIO_FAILED");
    expect(message).toMatch(
      /^ingestion cannot store what the fleet sends: the store \(memory\) failed every attempt for \d+\.\d s of wall time \(\d+ attempts, none committed\); last error: E_STORE_UNAVAILABLE: insert into measurements: connection terminated unexpectedly$/,
    );
    expect(details.store).toBe("memory");
    expect(details.attempts).toBeGreaterThanOrEqual(3);
    expect(store.counts.failed).toBeGreaterThanOrEqual(details.attempts as number);
  }, 60_000);
});

describe("a run stopped while its store fails", () => {
  it("reports what ran without waiting out the store (Ctrl-C in rpmlab demo)", async () => {
    const stop = new AbortController();
    const store = failingInserts(() => {
      stop.abort();
      return true;
    });
    // The default limit (30 s wall) is never reached: the stop ends the wait for the store.
    const report = await runScenario(loadScenario(FIXTURE), {
      openStore: store.open,
      signal: stop.signal,
    });
    expect(store.counts.failed).toBeGreaterThan(0);
    expect(report.counts.readings.taken).toBeGreaterThan(0);
    expect(report.counts.readings.stored).toBe(0);
  }, 20_000);
});

describe("a run whose store refuses measurement rows", () => {
  it("ends with the readings dead-lettered and the expectations failed, not hung", async () => {
    // Not E_STORE_UNAVAILABLE: ingestion isolates each message and keeps it as a dead letter.
    const store = failingInserts(
      () => true,
      () => new Error('invalid input syntax for type bigint: "1.5"'),
    );
    const report = await runScenario(loadScenario(FIXTURE), { openStore: store.open });
    expect(store.counts.failed).toBeGreaterThan(0);
    expect(report.passed).toBe(false);
    expect(report.counts.readings.taken).toBeGreaterThan(0);
    expect(report.counts.readings.stored).toBe(0);
    expect(report.counts.readings.missing).toBe(report.counts.readings.taken);
    // And the report says why: every message the devices sent, kept with the store's reason.
    expect(report.dead_letters.count).toBeGreaterThan(0);
    expect(report.dead_letters.reasons).toHaveLength(1);
    expect(report.dead_letters.reasons[0]!.reason).toContain(
      'invalid input syntax for type bigint: "1.5"',
    );
    expect(report.dead_letters.reasons[0]!.count).toBe(report.dead_letters.count);
  }, 60_000);
});

/**
 * The lab's store, opened as usual, whose repository `repo` throws on every call of `method`
 * (outside transactions: what the API's reads use).
 */
function failingReads(repo: "measurements" | "webhookDeliveries", method: string) {
  return async (spec: string, options: OpenStoreOptions): Promise<Store> => {
    const store = await openStore(spec, options);
    const failing = new Proxy(store[repo], {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (name === method) {
          return () => {
            throw new RpmlabError("E_STORE_UNAVAILABLE", `${method}: connection terminated`);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return new Proxy(store, {
      get(target, key) {
        if (key === repo) return failing;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
}

/** The run of FIXTURE on that store: it must fail with E_SCENARIO_FAILED; its message. */
async function failureOf(open: ReturnType<typeof failingReads>): Promise<string> {
  const error = await runScenario(loadScenario(FIXTURE), { openStore: open }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RpmlabError);
  expect((error as RpmlabError).code).toBe("E_SCENARIO_FAILED");
  return (error as RpmlabError).message;
}

describe("a run whose store fails when the report reads it", () => {
  it("ends with E_SCENARIO_FAILED naming the call the lab failed (exit code 3), not a usage error", async () => {
    // Before: E_USAGE, which rpmlab run turned into exit code 2, a usage error.
    expect(await failureOf(failingReads("measurements", "records"))).toMatch(
      /^GET \/hwi\/hwi-devices\/[0-9a-f-]{36}\/measurements\/: 500 \{"detail":"A server error occurred/,
    );
  }, 60_000);
});

describe("a run whose delivery log cannot be read", () => {
  it("ends with E_SCENARIO_FAILED, not a report counting 0 deliveries of every kind", async () => {
    // Before: the report counted 0 in each state, and `failed == 0` held by mistake (PASSED).
    expect(await failureOf(failingReads("webhookDeliveries", "list"))).toMatch(
      /^GET \/lab\/v1\/accounts\/clinic\/webhook-deliveries\/\?webhook_id=[0-9a-f-]{36}&state=\w+&page=1&page_size=1: 500 /,
    );
  }, 60_000);
});

describe("a run whose store fails for a while", () => {
  it("completes with every reading stored when the first inserts fail", async () => {
    const store = failingInserts((attempt) => attempt <= 3);
    const report = await runScenario(loadScenario(FIXTURE), { openStore: store.open });
    expect(store.counts.failed).toBe(3);
    expect(report.passed, renderText(report)).toBe(true);
    expect(report.counts.readings.stored).toBe(report.counts.readings.taken);
  }, 60_000);
});

describe("a run on a store that already holds a lab", () => {
  it("is refused before anything runs, naming the store and what to do; the store is kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-scenario-store-"));
    const spec = `sqlite:${join(dir, "run.db")}`;
    /** Every record the file holds, read by a store opened apart from the runs. */
    const storedRecords = async () => {
      const store = await openStore(spec, {
        clock: new VirtualClock({ startMs: 0 }),
        rng: new Rng("check"),
      });
      try {
        const accounts = await store.accounts.list();
        const counts = await Promise.all(accounts.map((a) => store.measurements.count(a.id)));
        return counts.reduce((sum, n) => sum + n, 0);
      } finally {
        await store.close();
      }
    };
    try {
      const scenario = {
        ...loadScenario(FIXTURE),
        transports: { ble: "direct", broker: "embedded", store: spec },
      };
      expect((await runScenario(scenario, {})).passed).toBe(true);
      const before = await storedRecords();
      expect(before).toBeGreaterThan(0);

      // Again on the same file (as after a run killed halfway): no second enrolment on top.
      const error = await runScenario(scenario, {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RpmlabError);
      expect((error as RpmlabError).code).toBe("E_SCENARIO_INVALID");
      expect((error as RpmlabError).message).toBe(
        `the store ${spec} already holds a lab (accounts clinic): a scenario starts from an empty store. Delete it (for sqlite:PATH, the file and its -wal and -shm files), empty the PostgreSQL database, or name another store in transports.store`,
      );
      expect(await storedRecords()).toBe(before);

      // rpmlab run: exit 2, as a file that cannot run (a retry would fail alike), not 3.
      const file = join(dir, "store-faults.yaml");
      writeFileSync(file, `${readFileSync(FIXTURE, "utf8")}\ntransports: { store: "${spec}" }\n`);
      const cli = await runCli("run", file, "--no-progress");
      expect(cli.code, cli.stderr).toBe(2);
      expect(cli.stderr).toBe(
        `rpmlab: E_SCENARIO_INVALID: scenario store-faults: the store ${spec} already holds a lab (accounts clinic): a scenario starts from an empty store. Delete it (for sqlite:PATH, the file and its -wal and -shm files), empty the PostgreSQL database, or name another store in transports.store`,
      );
      expect(await storedRecords()).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("a run whose store fails to close", () => {
  it("ends with E_SHUTDOWN_INCOMPLETE naming the store, as serve does, not a clean report", async () => {
    let closed = false;
    const open = async (spec: string, options: OpenStoreOptions): Promise<Store> => {
      const store = await openStore(spec, options);
      return new Proxy(store, {
        get(target, key) {
          if (key === "close") {
            return async () => {
              await target.close();
              closed = true;
              throw new Error("disk full while checkpointing");
            };
          }
          const value = Reflect.get(target, key, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    };
    const error = await runScenario(loadScenario(FIXTURE), { openStore: open }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(closed).toBe(true);
    expect(error).toBeInstanceOf(RpmlabError);
    expect((error as RpmlabError).code).toBe("E_SHUTDOWN_INCOMPLETE");
    expect((error as RpmlabError).message).toContain(
      "the store (disk full while checkpointing) failed to close",
    );
  }, 60_000);
});
