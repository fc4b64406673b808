import type { Worker } from "node:worker_threads";
import { RpmlabError } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { startTsWorker } from "./ts-worker.ts";
import { fromWire, type WireError } from "./wire-error.ts";

/** What crosses to a thread that serves calls (serveWorkerCalls). */
export type ToCallThread<Req> =
  /** `now`: the main clock's time, for what the thread stamps itself (RelayedClock). */
  | { readonly kind: "call"; readonly id: number; readonly now: number; readonly request: Req }
  | { readonly kind: "stop" };

/** What comes back: ready once opened (or failed), then each call's result or error. */
export type FromCallThread<Res> =
  | { readonly kind: "ready" }
  | { readonly kind: "failed"; readonly error: WireError }
  | { readonly kind: "done"; readonly id: number; readonly result: Res }
  | { readonly kind: "error"; readonly id: number; readonly error: WireError };

export interface WorkerCallsOptions {
  /** The thread's module: it calls serveWorkerCalls. */
  readonly module: URL;
  /** tsWorkerData() of the thread, made at each start (it may carry the clock's time). */
  readonly init: () => unknown;
  /** The thread as errors name it, e.g. "ingestion worker". */
  readonly name: string;
  /** The store it works on, for the error's details. */
  readonly store: string;
  readonly logger?: Logger;
}

interface Pending<Res> {
  readonly resolve: (result: Res) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A worker thread that answers calls one at a time, in the order they were made (the ingestion
 * worker, the webhook dispatch worker). The thread starts on the first call (or start()); one that
 * dies fails the calls under way with E_STORE_UNAVAILABLE — each owner retries its own way — and
 * the next call starts it again.
 */
export class WorkerCalls<Req, Res> {
  private thread: Promise<Worker> | undefined;
  private readonly pending = new Map<number, Pending<Res>>();
  private nextId = 1;

  constructor(private readonly options: WorkerCallsOptions) {}

  async start(): Promise<void> {
    await this.worker();
  }

  async call(request: Req, now: number): Promise<Res> {
    const worker = await this.worker();
    const id = this.nextId++;
    return new Promise<Res>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ kind: "call", id, now, request } satisfies ToCallThread<Req>);
    });
  }

  /** Lets the thread close what it opened, and waits for it to end. */
  async stop(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    const worker = await thread?.catch(() => undefined);
    if (worker === undefined) return;
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.postMessage({ kind: "stop" } satisfies ToCallThread<Req>);
    await exited;
  }

  private worker(): Promise<Worker> {
    this.thread ??= this.spawn();
    return this.thread;
  }

  private spawn(): Promise<Worker> {
    const { module, init, name, store, logger } = this.options;
    const worker = startTsWorker(module, init());
    const thread = new Promise<Worker>((resolve, reject) => {
      worker.on("message", (message: FromCallThread<Res>) => {
        if (message.kind === "ready") resolve(worker);
        else if (message.kind === "failed") reject(fromWire(message.error));
        else if (message.kind === "done") this.settle(message.id)?.resolve(message.result);
        else this.settle(message.id)?.reject(fromWire(message.error));
      });
      const ended = (reason: string) => {
        if (this.thread === thread) this.thread = undefined;
        const error = new RpmlabError("E_STORE_UNAVAILABLE", `the ${name} ended: ${reason}`, {
          store,
        });
        reject(error);
        for (const pending of this.pending.values()) pending.reject(error);
        this.pending.clear();
      };
      worker.on("error", (error) => {
        logger?.error({ err: error }, `${name} failed`);
        ended(error.message);
      });
      worker.on("exit", (code) => ended(`exit code ${code}`));
    });
    return thread;
  }

  private settle(id: number): Pending<Res> | undefined {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    return pending;
  }
}
