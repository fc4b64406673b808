/**
 * HTTP load for the benchmarks: a worker thread (its own event loop) sends GET requests with a
 * fixed concurrency over keep-alive connections to 127.0.0.1, and reports requests/s and latency
 * percentiles. Not a benchmark itself (run.ts skips files starting with "_").
 */
import { Worker } from "node:worker_threads";

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** One line of figures. */
export function formatLoad(r: LoadResult): string {
  const rps = Math.round(r.rps).toLocaleString("en").padStart(7);
  const errors = r.errors > 0 ? `  ${r.errors} errors` : "";
  return `${rps} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(6)} ms${errors}`;
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
    const worker = new Worker(LOAD_WORKER, {
      eval: true,
      workerData: { port, sequences, key, concurrency },
    });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

/** Plain JavaScript, so the worker needs no TypeScript loader. */
const LOAD_WORKER = `
const http = require("node:http");
const { parentPort, workerData } = require("node:worker_threads");
const { port, sequences, key, concurrency } = workerData;
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
(async () => {
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  agent.destroy();
  parentPort.postMessage({ rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), errors });
})();
`;
