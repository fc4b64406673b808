import type { Worker } from "node:worker_threads";
import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Clock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import { startTsWorker } from "../core/ts-worker.ts";
import { fromWire } from "../core/wire-error.ts";
import type { DispatchStore, ExchangeResult, ExpandResult } from "./dispatch-store.ts";
import type {
  DispatchCall,
  DispatchWorkerInit,
  FromDispatchWorker,
  ToDispatchWorker,
} from "./dispatch-worker-protocol.ts";

export interface WorkerDispatchOptions {
  /** The lab's SQLite file (workerStoreOf), migrated already. */
  readonly storeSpec: string;
  readonly catalogue: Catalogue;
  /** Seed of the worker store's id stream (delivery UUIDs). */
  readonly seed: string;
  /** Each call carries its time: the worker stamps rows with the main thread's clock. */
  readonly clock: Clock;
  readonly logger?: Logger;
}

interface Pending {
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The dispatcher's store side in a worker thread with its own connection to the SQLite file.
 * Outbox expansion (reading measurements, building bodies), recording attempts and claiming
 * cost several times what the HTTP requests do (test/bench/webhooks.ts); here they run beside
 * the requests instead of between them. A thread that dies fails its calls with
 * E_STORE_UNAVAILABLE — the dispatcher's poll comes back to the work, and claims lapse — and
 * is started again by the next call.
 */
export class WorkerDispatchStore implements DispatchStore {
  private thread: Promise<Worker> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly options: WorkerDispatchOptions) {}

  expand(...args: Parameters<DispatchStore["expand"]>): Promise<ExpandResult> {
    return this.call({ method: "expand", args }) as Promise<ExpandResult>;
  }

  exchange(...args: Parameters<DispatchStore["exchange"]>): Promise<ExchangeResult> {
    return this.call({ method: "exchange", args }) as Promise<ExchangeResult>;
  }

  dueWebhooks(now: number): Promise<string[]> {
    return this.call({ method: "dueWebhooks", args: [now] }) as Promise<string[]>;
  }

  nextDue(): Promise<number | null> {
    return this.call({ method: "nextDue", args: [] }) as Promise<number | null>;
  }

  async release(ids: readonly string[], at: number): Promise<void> {
    await this.call({ method: "release", args: [ids, at] });
  }

  prune(before: number): Promise<number> {
    return this.call({ method: "prune", args: [before] }) as Promise<number>;
  }

  /** Closes the worker's store connection and ends the thread. */
  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    const worker = await thread?.catch(() => undefined);
    if (worker === undefined) return;
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.postMessage({ kind: "stop" } satisfies ToDispatchWorker);
    await exited;
  }

  private async call(call: DispatchCall): Promise<unknown> {
    this.thread ??= this.spawn();
    const worker = await this.thread;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const message: ToDispatchWorker = {
        kind: "call",
        id,
        now: this.options.clock.now(),
        call,
      };
      worker.postMessage(message);
    });
  }

  private spawn(): Promise<Worker> {
    const { storeSpec, catalogue, clock, seed } = this.options;
    const init: DispatchWorkerInit = {
      storeSpec,
      profiles: catalogue.profiles,
      seed,
      now: clock.now(),
    };
    const worker = startTsWorker(new URL("./dispatch-worker-entry.ts", import.meta.url), init);
    const thread = new Promise<Worker>((resolve, reject) => {
      worker.on("message", (message: FromDispatchWorker) => {
        if (message.kind === "ready") resolve(worker);
        else if (message.kind === "failed") reject(fromWire(message.error));
        else if (message.kind === "done") this.settle(message.id)?.resolve(message.result);
        else this.settle(message.id)?.reject(fromWire(message.error));
      });
      const ended = (reason: string) => {
        if (this.thread === thread) this.thread = undefined;
        const error = new RpmlabError(
          "E_STORE_UNAVAILABLE",
          `the webhook dispatch worker ended: ${reason}`,
          { store: storeSpec },
        );
        reject(error);
        for (const pending of this.pending.values()) pending.reject(error);
        this.pending.clear();
      };
      worker.on("error", (error) => {
        this.options.logger?.error({ err: error }, "webhook dispatch worker failed");
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
