import { Worker, workerData } from "node:worker_threads";

/** What the bootstrap below finds in `workerData`. */
interface Boot {
  readonly tsx: string;
  readonly module: string;
  readonly data: unknown;
}

/**
 * Registers tsx in the new thread, then imports the module. Loader hooks do not carry into
 * worker threads, and rpmlab runs its TypeScript sources through tsx everywhere (bin/rpmlab,
 * `node --import tsx`, vitest). Plain CommonJS, so the thread needs no loader to read it.
 */
const BOOTSTRAP = `
const { workerData } = require("node:worker_threads");
import(workerData.tsx).then((tsx) => {
  tsx.register();
  return import(workerData.module);
});
`;

/**
 * A worker thread running a TypeScript module of the lab, with `data` for tsWorkerData(). It
 * starts without the parent's execArgv: tsx is registered once, by the bootstrap (an inherited
 * `--import tsx` would register it twice).
 */
export function startTsWorker(module: URL, data: unknown): Worker {
  const boot: Boot = { tsx: import.meta.resolve("tsx/esm/api"), module: module.href, data };
  return new Worker(BOOTSTRAP, { eval: true, execArgv: [], workerData: boot });
}

/** Inside a thread started by startTsWorker: the data it was given. */
export function tsWorkerData<T>(): T {
  return (workerData as Boot).data as T;
}
