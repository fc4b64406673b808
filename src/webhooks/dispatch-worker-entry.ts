/**
 * The webhook dispatch worker thread (started by WorkerDispatchStore): its own connection to the
 * lab's SQLite file and a StoreDispatch on it; calls in, results out, one at a time.
 */
import { parentPort } from "node:worker_threads";
import { Catalogue } from "../catalogue/catalogue.ts";
import { RelayedClock } from "../core/relayed-clock.ts";
import { Rng } from "../core/rng.ts";
import { tsWorkerData } from "../core/ts-worker.ts";
import { toWire } from "../core/wire-error.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import { StoreDispatch } from "./dispatch-store.ts";
import type {
  DispatchWorkerInit,
  FromDispatchWorker,
  ToDispatchWorker,
} from "./dispatch-worker-protocol.ts";
import { StatusMetrics } from "./status-metrics.ts";

const port = parentPort!;
const init = tsWorkerData<DispatchWorkerInit>();
const clock = new RelayedClock(init.now);
const send = (message: FromDispatchWorker) => port.postMessage(message);

let store: Store;
try {
  // Opening with migrate (a no-op on the migrated file) starts this connection's id stream:
  // deliveries get public UUIDs.
  store = await openStore(init.storeSpec, { clock, rng: new Rng(init.seed) });
} catch (error) {
  send({ kind: "failed", error: toWire(error) });
  process.exit(1);
}
const dispatch = new StoreDispatch(store, new StatusMetrics(new Catalogue(init.profiles)));

/** Calls run one after another, in the order they came. */
let queue = Promise.resolve();
port.on("message", (message: ToDispatchWorker) => {
  queue = queue.then(async () => {
    if (message.kind === "stop") {
      port.close();
      await store.close();
      return;
    }
    clock.set(message.now);
    try {
      const { method, args } = message.call;
      const run = dispatch[method] as (...a: readonly unknown[]) => Promise<unknown>;
      const result = await run.apply(dispatch, args);
      send({ kind: "done", id: message.id, result });
    } catch (error) {
      send({ kind: "error", id: message.id, error: toWire(error) });
    }
  });
});
send({ kind: "ready" });
