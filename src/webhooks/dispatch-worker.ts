import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import { WorkerCalls } from "../core/worker-calls.ts";
import type { DispatchStore, ExchangeResult, ExpandResult } from "./dispatch-store.ts";
import type { DispatchCall, DispatchWorkerInit } from "./dispatch-worker-protocol.ts";

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

/**
 * The dispatcher's store side in a worker thread with its own connection to the SQLite file.
 * Outbox expansion (reading measurements, building bodies), recording attempts and claiming
 * cost several times what the HTTP requests do (test/bench/webhooks.ts); here they run beside
 * the requests instead of between them. A thread that dies fails its calls with
 * E_STORE_UNAVAILABLE — the dispatcher's poll comes back to the work, and claims lapse — and
 * is started again by the next call.
 */
export class WorkerDispatchStore implements DispatchStore {
  private readonly calls: WorkerCalls<DispatchCall, unknown>;

  constructor(private readonly options: WorkerDispatchOptions) {
    const { storeSpec, catalogue, clock, seed, logger } = options;
    this.calls = new WorkerCalls({
      module: new URL("./dispatch-worker-entry.ts", import.meta.url),
      init: (): DispatchWorkerInit => ({
        storeSpec,
        profiles: catalogue.profiles,
        seed,
        now: clock.now(),
      }),
      name: "webhook dispatch worker",
      store: storeSpec,
      ...(logger === undefined ? {} : { logger }),
    });
  }

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
  close(): Promise<void> {
    return this.calls.stop();
  }

  private call(call: DispatchCall): Promise<unknown> {
    return this.calls.call(call, this.options.clock.now());
  }
}
