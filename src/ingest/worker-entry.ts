/**
 * The ingestion worker thread (started by WorkerProcessor): its own connection to the lab's
 * store and a MessageProcessor on it; batches in, results out, one at a time.
 */
import { Catalogue } from "../catalogue/catalogue.ts";
import { Rng } from "../core/rng.ts";
import { serveWorkerCalls } from "../core/worker-serve.ts";
import { openStore } from "../store/open.ts";
import type { BatchResult } from "./events.ts";
import type { Inbound } from "./prepare.ts";
import { MessageProcessor } from "./processor.ts";
import type { WorkerInit } from "./worker-protocol.ts";

await serveWorkerCalls<WorkerInit, readonly Inbound[], BatchResult>(async (init, clock) => {
  // The main thread migrated the store; ingestion creates no rows with public (Rng) ids.
  const store = await openStore(init.storeSpec, {
    clock,
    rng: new Rng("ingest-worker"),
    migrate: false,
  });
  const processor = new MessageProcessor({ store, catalogue: new Catalogue(init.profiles) });
  return { handle: (batch) => processor.process(batch), close: () => store.close() };
});
