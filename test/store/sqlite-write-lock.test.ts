import { describe, expect, it } from "vitest";
import { announceWriteEnd, beginImmediate } from "../../src/store/sqlite-write-lock.ts";

/** SQLite's write lock, as the connections below see it: who holds it. */
class Lock {
  holder: string | null = "another process";
  readonly log: string[] = [];

  /** A connection whose BEGIN IMMEDIATE takes the lock, or answers SQLITE_BUSY. */
  connection(label: string) {
    return async (sql: string): Promise<void> => {
      if (sql !== "begin immediate") return;
      if (this.holder !== null) {
        this.log.push(`${label} busy`);
        throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
      }
      this.holder = label;
      this.log.push(`${label} began`);
    };
  }

  /** The holder commits (announcing it as this process's connections do). */
  commit(): void {
    this.holder = null;
    announceWriteEnd();
  }
}

/**
 * Waits far longer than the test takes, so that only commits wake a transaction (the real
 * timing's 5 ms polls and 50 ms yield run out on a loaded machine between two turns).
 */
const PATIENT = { pollMs: 60_000, yieldMs: 60_000 };

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Turns of the event loop until `done`: what the waits below react to, without a timer. */
const until = async (done: () => boolean) => {
  while (!done()) await turns(1);
};

describe("beginImmediate: waiting for SQLite's write lock in turns", () => {
  it("a waiter tries again at the holder's commit, and a newcomer lets it go first", async () => {
    const lock = new Lock();
    const waiter = beginImmediate(lock.connection("waiter"), PATIENT);
    await turns(5);
    expect(lock.log).toEqual(["waiter busy"]);

    // A transaction begins while the waiter waits: it does not race the waiter for the lock.
    const newcomer = beginImmediate(lock.connection("newcomer"), PATIENT);
    await turns(5);
    expect(lock.log).toEqual(["waiter busy"]);

    // The holder commits: the waiter begins first, its own mark not making it wait again.
    lock.commit();
    await waiter;
    expect(lock.log.filter((line) => line.endsWith("began"))).toEqual(["waiter began"]);
    expect(lock.holder).toBe("waiter");

    // The waiter commits: the newcomer's turn.
    lock.commit();
    await newcomer;
    expect(lock.holder).toBe("newcomer");
    lock.commit();
  });

  it("a newcomer woken by the holder's commit before the waiter still lets the waiter begin first", async () => {
    const lock = new Lock();
    // The waiter polls (the holder is another process): each poll waits again, after the
    // newcomer's wait, so the holder's commit wakes the newcomer first.
    const waiter = beginImmediate(lock.connection("waiter"), { pollMs: 1, yieldMs: 60_000 });
    await until(() => lock.log.length > 0);
    const newcomer = beginImmediate(lock.connection("newcomer"), PATIENT);
    const polls = lock.log.length;
    await until(() => lock.log.length >= polls + 2);

    lock.commit();
    await waiter;
    expect(lock.holder).toBe("waiter");
    expect(lock.log).not.toContain("newcomer busy");

    lock.commit();
    await newcomer;
    expect(lock.holder).toBe("newcomer");
    lock.commit();
  });
});
