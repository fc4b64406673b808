import { getEnvironmentData, setEnvironmentData } from "node:worker_threads";
import { startStopwatch } from "../core/stopwatch.ts";

/**
 * How long a write waits for SQLite's write lock before it fails with SQLITE_BUSY: the
 * connection's busy_timeout (open.ts), and the wait of beginImmediate below.
 */
export const BUSY_TIMEOUT_MS = 5000;

/** How a transaction waits for the lock (tests give their own, far longer). */
export interface LockTiming {
  /**
   * How often a waiting transaction tries again when no commit of this process woke it: the
   * lock is another process's (an `rpmlab` command on the same file). Default 5 ms.
   */
  readonly pollMs: number;
  /**
   * How long a transaction that found another waiting lets it go first, at most: until the
   * waiter's commit, or this long, for a waiter slow to wake on a busy machine (or one that
   * died). Default 50 ms.
   */
  readonly yieldMs: number;
}

const TIMING: LockTiming = { pollMs: 5, yieldMs: 50 };

/** Environment data every worker thread spawned from here inherits: the same shared memory. */
const SHARED_KEY = "rpmlab:sqlite-write-lock";

/**
 * Shared by every thread of this process that opens a SQLite store: the API's connection in the
 * main thread, the ingestion worker's and the webhook dispatch worker's
 * (ingest/worker-processor.ts, webhooks/dispatch-worker.ts). Worker threads get it through
 * node:worker_threads environment data, which clones a SharedArrayBuffer as the same memory.
 * COMMITS counts commits and rollbacks (the lock freed); WANTED is 1 while a transaction waits
 * for the lock.
 */
const COMMITS = 0;
const WANTED = 1;
const shared = new Int32Array(sharedBuffer());

function sharedBuffer(): SharedArrayBuffer {
  const inherited = getEnvironmentData(SHARED_KEY);
  if (inherited instanceof SharedArrayBuffer) return inherited;
  const created = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
  setEnvironmentData(SHARED_KEY, created);
  return created;
}

/**
 * BEGIN IMMEDIATE without SQLite's busy handler. That handler sleeps between tries (1, 2, 5, 10,
 * 15, 20, 25, 25, 25, 50, 50, then 100 ms), blocking the thread — the main thread's event loop
 * too, with the API, the broker and the webhook requests on it — and wakes long after the holder
 * committed: with ingestion and the dispatcher writing batches to one file, transactions waited
 * up to 300 ms for a lock held a few ms at a time (a loaded machine). Here a transaction that
 * finds the lock taken waits without blocking, is woken by the next commit or rollback of any
 * thread of this process, and tries again (every pollMs when the holder is another process).
 * Turns alternate: a transaction that begins while another waits lets that one go first (until
 * its commit, yieldMs at most: a waiter that died, a worker terminated, costs one transaction
 * that wait), where the thread that just committed would otherwise win most races.
 * Webhook latency at 1,000 readings/s with post_as_array (test/bench/webhooks.ts, idle 2-core
 * machine, 2026-11-29, two runs each): p99 16 and 28 ms from stored to received, against 79 and
 * 112 ms in SQLite's busy handler (p50 3.2 and 3.2 ms, against 4.0 and 3.2). After
 * BUSY_TIMEOUT_MS it fails with SQLITE_BUSY, as busy_timeout would have.
 */
export async function beginImmediate(
  execute: (sql: string) => Promise<unknown>,
  timing: LockTiming = TIMING,
): Promise<void> {
  await execute("pragma busy_timeout = 0");
  try {
    const elapsed = startStopwatch();
    // A transaction lets a waiter go first only before it has tried itself (then WANTED may be
    // its own), and for yieldMs at most in all.
    let mayYield = true;
    for (;;) {
      // Read before trying: a commit between the try and the wait changes it, and the wait
      // returns at once instead of missing that wake-up.
      const seen = Atomics.load(shared, COMMITS);
      let waitMs = timing.pollMs;
      if (mayYield && Atomics.load(shared, WANTED) === 1 && elapsed() < timing.yieldMs) {
        // Letting the waiter go first is not waiting for the lock: WANTED stays the waiter's,
        // or two threads would each let the other go first while the lock stood free. Woken by
        // the holder's commit, the waiter may not have begun yet (WANTED is cleared when it
        // has): this one waits on, until the waiter's own commit.
        waitMs = timing.yieldMs - elapsed();
      } else {
        mayYield = false;
        try {
          await execute("begin immediate");
          Atomics.store(shared, WANTED, 0);
          return;
        } catch (error) {
          if (!isBusy(error) || elapsed() >= BUSY_TIMEOUT_MS) throw error;
        }
        Atomics.store(shared, WANTED, 1);
      }
      const wait = Atomics.waitAsync(
        shared,
        COMMITS,
        seen,
        Math.max(0, Math.min(waitMs, BUSY_TIMEOUT_MS - elapsed())),
      );
      if (wait.async) await wait.value;
    }
  } finally {
    await execute(`pragma busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

/** After a commit or rollback: wakes this process's transactions waiting for the lock. */
export function announceWriteEnd(): void {
  Atomics.add(shared, COMMITS, 1);
  Atomics.notify(shared, COMMITS);
}

function isBusy(error: unknown): boolean {
  return (error as { code?: unknown }).code === "SQLITE_BUSY";
}
