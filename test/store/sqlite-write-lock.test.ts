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

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("beginImmediate: waiting for SQLite's write lock in turns", () => {
  it("a waiter tries again at the holder's commit, and a newcomer lets it go first", async () => {
    const lock = new Lock();
    const waiter = beginImmediate(lock.connection("waiter"));
    await turns(5);
    expect(lock.log).toEqual(["waiter busy"]);

    // A transaction begins while the waiter waits: it does not race the waiter for the lock.
    const newcomer = beginImmediate(lock.connection("newcomer"));
    await turns(5);
    expect(lock.log).toEqual(["waiter busy"]);

    // The holder commits: the waiter begins first, its own mark not making it wait again (the
    // newcomer, woken too, finds the lock taken and waits in its turn).
    lock.commit();
    await waiter;
    expect(lock.log.slice(0, 2)).toEqual(["waiter busy", "waiter began"]);
    expect(lock.holder).toBe("waiter");

    // The waiter commits: the newcomer's turn.
    lock.commit();
    await newcomer;
    expect(lock.holder).toBe("newcomer");
    lock.commit();
  });
});
