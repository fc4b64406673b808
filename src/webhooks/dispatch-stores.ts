import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { Rng } from "../core/rng.ts";
import { workerStoreOf } from "../ingest/worker-processor.ts";
import type { Store } from "../store/store.ts";
import { type DispatchStore, StoreDispatch } from "./dispatch-store.ts";
import { WorkerDispatchStore } from "./dispatch-worker.ts";
import { StatusMetrics } from "./status-metrics.ts";

export interface DispatchStoreOptions {
  /** The lab's store, open in this thread. */
  readonly store: Store;
  /** Its spec: a SQLite file gets a worker thread of its own. */
  readonly storeSpec: string;
  readonly catalogue: Catalogue;
  /** Delivery ids of the worker's store come from a stream forked from it. */
  readonly rng: Rng;
  readonly clock: Clock;
  readonly logger?: Logger;
}

/**
 * The dispatcher's store side as `serve` runs it: on a SQLite file, in a worker thread beside
 * the ingestion worker's (SQLite allows one writer; each transaction waits for the other's
 * commit, store/sqlite-write-lock.ts); on memory (one connection, nothing another thread could
 * open) and PostgreSQL (queries wait on the network, not the thread), in this thread.
 */
export function dispatchStoreFor(options: DispatchStoreOptions): DispatchStore {
  const { store, storeSpec, catalogue, rng, clock, logger } = options;
  const file = workerStoreOf(storeSpec);
  if (file === undefined) return new StoreDispatch(store, new StatusMetrics(catalogue));
  return new WorkerDispatchStore({
    storeSpec: file,
    catalogue,
    seed: rng.fork("dispatch-worker").seed,
    clock,
    ...(logger === undefined ? {} : { logger }),
  });
}
