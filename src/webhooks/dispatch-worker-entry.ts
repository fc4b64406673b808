/**
 * The webhook dispatch worker thread (started by WorkerDispatchStore): its own connection to the
 * lab's SQLite file and a StoreDispatch on it; calls in, results out, one at a time.
 */
import { Catalogue } from "../catalogue/catalogue.ts";
import { Rng } from "../core/rng.ts";
import { serveWorkerCalls } from "../core/worker-serve.ts";
import { openStore } from "../store/open.ts";
import { StoreDispatch } from "./dispatch-store.ts";
import { packClaims, unpackOutcomes } from "./dispatch-wire.ts";
import type {
  DispatchCall,
  DispatchWorkerInit,
  WireExchangeResult,
  WireExpandResult,
} from "./dispatch-worker-protocol.ts";
import { StatusMetrics } from "./status-metrics.ts";

await serveWorkerCalls<DispatchWorkerInit, DispatchCall, unknown>(async (init, clock) => {
  // Opening with migrate (a no-op on the migrated file) starts this connection's id stream:
  // deliveries get public UUIDs.
  const store = await openStore(init.storeSpec, { clock, rng: new Rng(init.seed) });
  const dispatch = new StoreDispatch(store, new StatusMetrics(new Catalogue(init.profiles)));
  return {
    handle: async (call) => {
      if (call.method === "expand") {
        const { claimed, ...rest } = await dispatch.expand(...call.args);
        return { ...rest, claimed: packClaims(claimed) } satisfies WireExpandResult;
      }
      if (call.method === "exchange") {
        const [outcomes, ...rest] = call.args;
        const { claims } = await dispatch.exchange(unpackOutcomes(outcomes), ...rest);
        return {
          claims: claims.map(({ webhookId, rows, exhausted }) => ({
            webhookId,
            count: rows.length,
            exhausted,
          })),
          rows: packClaims(claims.flatMap((c) => c.rows)),
        } satisfies WireExchangeResult;
      }
      const run = dispatch[call.method] as (...a: readonly unknown[]) => Promise<unknown>;
      return run.apply(dispatch, call.args);
    },
    close: () => store.close(),
  };
});
