/**
 * The webhook dispatch worker thread (started by WorkerDispatchStore): its own connection to the
 * lab's SQLite file and a StoreDispatch on it; calls in, results out, one at a time.
 */
import { Catalogue } from "../catalogue/catalogue.ts";
import { Rng } from "../core/rng.ts";
import { serveWorkerCalls } from "../core/worker-serve.ts";
import { openStore } from "../store/open.ts";
import { StoreDispatch } from "./dispatch-store.ts";
import type { DispatchCall, DispatchWorkerInit } from "./dispatch-worker-protocol.ts";
import { StatusMetrics } from "./status-metrics.ts";

await serveWorkerCalls<DispatchWorkerInit, DispatchCall, unknown>(async (init, clock) => {
  // Opening with migrate (a no-op on the migrated file) starts this connection's id stream:
  // deliveries get public UUIDs.
  const store = await openStore(init.storeSpec, { clock, rng: new Rng(init.seed) });
  const dispatch = new StoreDispatch(store, new StatusMetrics(new Catalogue(init.profiles)));
  return {
    handle: ({ method, args }) => {
      const run = dispatch[method] as (...a: readonly unknown[]) => Promise<unknown>;
      return run.apply(dispatch, args);
    },
    close: () => store.close(),
  };
});
