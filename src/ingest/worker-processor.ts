import type { Catalogue } from "../catalogue/catalogue.ts";
import { parseStoreSpec } from "../config/store-spec.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import { WorkerCalls } from "../core/worker-calls.ts";
import type { BatchResult } from "./events.ts";
import type { Inbound } from "./prepare.ts";
import type { BatchProcessor } from "./processor.ts";
import type { WorkerInit } from "./worker-protocol.ts";

export interface WorkerProcessorOptions {
  /** A store the worker can open beside the main thread's: a SQLite file (see workerStoreOf). */
  readonly storeSpec: string;
  readonly catalogue: Catalogue;
  /** Sent with each batch: the worker stamps rows with the main thread's time. */
  readonly clock: Clock;
  readonly logger?: Logger;
}

/**
 * `serve` ingests into a SQLite file through a worker thread. SQLite runs in the thread that
 * calls it, and a batch's transaction (decode, resolve, insert, commit) costs several times what
 * the broker and the MQTT client spend on its messages (test/bench/ingest.ts); on the main
 * thread it held up the embedded broker, the MQTT client and the API for as long.
 */
export function workerStoreOf(storeSpec: string): string | undefined {
  const spec = parseStoreSpec(storeSpec);
  return spec.kind === "sqlite" && !spec.memory ? storeSpec : undefined;
}

/**
 * Runs MessageProcessor in a worker thread with its own connection to the store (worker-entry.ts).
 * Batches go one at a time and come back committed or failed, exactly as in this thread, so the
 * ingestor acknowledges after the commit all the same. A thread that dies fails its batch with
 * E_STORE_UNAVAILABLE (the ingestor retries it) and is started again by the next batch.
 */
export class WorkerProcessor implements BatchProcessor {
  private readonly calls: WorkerCalls<readonly Inbound[], BatchResult>;

  constructor(private readonly options: WorkerProcessorOptions) {
    const { storeSpec, catalogue, clock, logger } = options;
    this.calls = new WorkerCalls({
      module: new URL("./worker-entry.ts", import.meta.url),
      init: (): WorkerInit => ({ storeSpec, profiles: catalogue.profiles, now: clock.now() }),
      name: "ingestion worker",
      store: storeSpec,
      ...(logger === undefined ? {} : { logger }),
    });
  }

  start(): Promise<void> {
    return this.calls.start();
  }

  process(batch: readonly Inbound[]): Promise<BatchResult> {
    return this.calls.call(batch, this.options.clock.now());
  }

  /** Closes the worker's store connection and ends the thread. */
  stop(): Promise<void> {
    return this.calls.stop();
  }
}
