import type { Profile } from "../catalogue/schema.ts";
import type { WireError } from "../core/wire-error.ts";
import type { BatchResult } from "./events.ts";
import type { Inbound } from "./prepare.ts";

/** What the ingestion worker starts with (tsWorkerData). */
export interface WorkerInit {
  /** The store to open: the same database as the main thread's (a `sqlite:PATH` file). */
  readonly storeSpec: string;
  /** The catalogue, as data (a Catalogue is rebuilt from it in the thread). */
  readonly profiles: readonly Profile[];
  readonly now: number;
}

export type ToWorker =
  /** `now`: the main clock's time, for what the store stamps itself (RelayedClock). */
  | {
      readonly kind: "batch";
      readonly id: number;
      readonly now: number;
      readonly batch: readonly Inbound[];
    }
  | { readonly kind: "stop" };

export type FromWorker =
  | { readonly kind: "ready" }
  | { readonly kind: "failed"; readonly error: WireError }
  | { readonly kind: "done"; readonly id: number; readonly result: BatchResult }
  | { readonly kind: "error"; readonly id: number; readonly error: WireError };
