import type { Worker } from "node:worker_threads";
import type { Catalogue } from "../catalogue/catalogue.ts";
import { parseStoreSpec } from "../config/store-spec.ts";
import type { Clock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import { startTsWorker } from "../core/ts-worker.ts";
import { fromWire } from "../core/wire-error.ts";
import type { BatchResult } from "./events.ts";
import type { Inbound } from "./prepare.ts";
import type { BatchProcessor } from "./processor.ts";
import type { FromWorker, ToWorker, WorkerInit } from "./worker-protocol.ts";

export interface WorkerProcessorOptions {
  /** A store the worker can open beside the main thread's: a SQLite file (see workerStoreOf). */
  readonly storeSpec: string;
  readonly catalogue: Catalogue;
  /** Sent with each batch: the worker stamps rows with the main thread's time. */
  readonly clock: Clock;
  readonly logger?: Logger;
}

interface Pending {
  readonly resolve: (result: BatchResult) => void;
  readonly reject: (error: unknown) => void;
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
  private thread: Promise<Worker> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly options: WorkerProcessorOptions) {}

  async start(): Promise<void> {
    await this.worker();
  }

  async process(batch: readonly Inbound[]): Promise<BatchResult> {
    const worker = await this.worker();
    const id = this.nextId++;
    return new Promise<BatchResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const message: ToWorker = { kind: "batch", id, now: this.options.clock.now(), batch };
      worker.postMessage(message);
    });
  }

  /** Closes the worker's store connection and ends the thread. */
  async stop(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    const worker = await thread?.catch(() => undefined);
    if (worker === undefined) return;
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.postMessage({ kind: "stop" } satisfies ToWorker);
    await exited;
  }

  private worker(): Promise<Worker> {
    this.thread ??= this.spawn();
    return this.thread;
  }

  private spawn(): Promise<Worker> {
    const { storeSpec, catalogue, clock } = this.options;
    const init: WorkerInit = { storeSpec, profiles: catalogue.profiles, now: clock.now() };
    const worker = startTsWorker(new URL("./worker-entry.ts", import.meta.url), init);
    const thread = new Promise<Worker>((resolve, reject) => {
      worker.on("message", (message: FromWorker) => {
        if (message.kind === "ready") resolve(worker);
        else if (message.kind === "failed") reject(fromWire(message.error));
        else if (message.kind === "done") this.settle(message.id)?.resolve(message.result);
        else this.settle(message.id)?.reject(fromWire(message.error));
      });
      const ended = (reason: string) => {
        if (this.thread === thread) this.thread = undefined;
        const error = new RpmlabError(
          "E_STORE_UNAVAILABLE",
          `the ingestion worker ended: ${reason}`,
          { store: storeSpec },
        );
        reject(error);
        for (const pending of this.pending.values()) pending.reject(error);
        this.pending.clear();
      };
      worker.on("error", (error) => {
        this.options.logger?.error({ err: error }, "ingestion worker failed");
        ended(error.message);
      });
      worker.on("exit", (code) => ended(`exit code ${code}`));
    });
    return thread;
  }

  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    return pending;
  }
}
