import { existsSync, readdirSync, readFileSync } from "node:fs";

/** CPU time (ms) of each thread of this process, by thread id (Linux /proc; empty elsewhere). */
export type ThreadCpu = ReadonlyMap<string, number>;

/** CLK_TCK is 100 on Linux: utime and stime count 10 ms ticks. */
const MS_PER_TICK = 10;

export function threadCpu(): ThreadCpu {
  const out = new Map<string, number>();
  if (!existsSync("/proc/self/task")) return out;
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      // Fields after the ")" of the command name: utime is the 12th, stime the 13th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(tid, (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/**
 * CPU µs per unit spent between two readings: by the main thread and by every other thread
 * (worker threads, V8's garbage-collector helpers, libuv). Unlike throughput, CPU per message
 * barely moves when other processes share the machine, so it tells where the cost is.
 */
export function cpuPerUnit(
  before: ThreadCpu,
  after: ThreadCpu,
  units: number,
): { main: number; others: number } | undefined {
  if (after.size === 0) return undefined;
  const mainTid = String(process.pid);
  let main = 0;
  let others = 0;
  for (const [tid, ms] of after) {
    const spent = ms - (before.get(tid) ?? 0);
    if (tid === mainTid) main += spent;
    else others += spent;
  }
  return { main: (main * 1000) / units, others: (others * 1000) / units };
}
