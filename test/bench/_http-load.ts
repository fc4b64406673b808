/**
 * HTTP load for the benchmarks: a child process sends GET requests with a fixed concurrency
 * over keep-alive connections to 127.0.0.1, and reports requests/s and latency percentiles;
 * beside them, the CPU time this process (the servers under test) spent per request. On a
 * machine shared with other work, req/s follows the share of the cores the servers get; CPU
 * time per request barely does, so it compares two servers even when req/s is noisy. The load
 * runs in another process so that its own CPU time is not counted. Not a benchmark itself
 * (run.ts skips files starting with "_").
 */
import { spawn } from "node:child_process";

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time (user + system) of this process per request, ms. */
  cpuMs: number;
}

/** One line of figures. */
export function formatLoad(r: LoadResult): string {
  const rps = Math.round(r.rps).toLocaleString("en").padStart(7);
  const errors = r.errors > 0 ? `  ${r.errors} errors` : "";
  return `${rps} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(6)} ms  CPU ${r.cpuMs.toFixed(2)} ms/req${errors}`;
}

/**
 * Runs every request of `sequences` with `concurrency` lanes: a lane takes the next sequence and
 * sends its paths one after another (a client walking pages); one-path sequences are independent
 * requests.
 */
export function load(
  port: number,
  sequences: readonly (readonly string[])[],
  key: string,
  concurrency: number,
): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=commonjs", "-e", LOAD_SCRIPT], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const started = process.cpuUsage();
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    child.once("error", reject);
    child.once("close", (code) => {
      const used = process.cpuUsage(started);
      if (code !== 0) return reject(new Error(`the load process exited with ${code}`));
      const r = JSON.parse(out) as Omit<LoadResult, "cpuMs"> & { requests: number };
      resolve({
        rps: r.rps,
        p50: r.p50,
        p99: r.p99,
        errors: r.errors,
        cpuMs: (used.user + used.system) / 1000 / r.requests,
      });
    });
    child.stdin.end(JSON.stringify({ port, sequences, key, concurrency }));
  });
}

/** Plain JavaScript, so the load process needs no TypeScript loader; its input on stdin. */
const LOAD_SCRIPT = `
const http = require("node:http");
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => run(JSON.parse(input)));

async function run({ port, sequences, key, concurrency }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = [];
  let next = 0, errors = 0;
  function one(path) {
    return new Promise((resolve) => {
      const t = performance.now();
      const req = http.get({ host: "127.0.0.1", port, path, agent, headers: { authorization: "Api-Key " + key } }, (res) => {
        res.on("data", () => {});
        res.on("end", () => { if (res.statusCode !== 200) errors++; latencies.push(performance.now() - t); resolve(); });
      });
      req.on("error", () => { errors++; resolve(); });
    });
  }
  async function lane() {
    while (next < sequences.length) { for (const path of sequences[next++]) await one(path); }
  }
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  agent.destroy();
  const requests = latencies.length;
  process.stdout.write(JSON.stringify({ rps: requests / seconds, p50: at(0.5), p99: at(0.99), errors, requests }));
}
`;
