/**
 * The ingestion worker thread (started by WorkerProcessor): its own connection to the lab's
 * store and a MessageProcessor on it; batches in, results out, one at a time.
 */
import { parentPort } from "node:worker_threads";
import { Catalogue } from "../catalogue/catalogue.ts";
import { RelayedClock } from "../core/relayed-clock.ts";
import { Rng } from "../core/rng.ts";
import { tsWorkerData } from "../core/ts-worker.ts";
import { toWire } from "../core/wire-error.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import { MessageProcessor } from "./processor.ts";
import type { FromWorker, ToWorker, WorkerInit } from "./worker-protocol.ts";

const port = parentPort!;
const init = tsWorkerData<WorkerInit>();
const clock = new RelayedClock(init.now);
const send = (message: FromWorker) => port.postMessage(message);

let store: Store;
try {
  // The main thread migrated the store; ingestion creates no rows with public (Rng) ids.
  store = await openStore(init.storeSpec, { clock, rng: new Rng("ingest-worker"), migrate: false });
} catch (error) {
  send({ kind: "failed", error: toWire(error) });
  process.exit(1);
}
const processor = new MessageProcessor({ store, catalogue: new Catalogue(init.profiles) });

/** Batches commit one after another, in the order they came. */
let queue = Promise.resolve();
port.on("message", (message: ToWorker) => {
  queue = queue.then(async () => {
    if (message.kind === "stop") {
      port.close();
      await store.close();
      return;
    }
    clock.set(message.now);
    try {
      send({ kind: "done", id: message.id, result: await processor.process(message.batch) });
    } catch (error) {
      send({ kind: "error", id: message.id, error: toWire(error) });
    }
  });
});
send({ kind: "ready" });
