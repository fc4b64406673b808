import type { Profile } from "../catalogue/schema.ts";
import type { DispatchStore } from "./dispatch-store.ts";

/** What the dispatch worker starts with (tsWorkerData). */
export interface DispatchWorkerInit {
  /** The lab's SQLite file, migrated by the main thread. */
  readonly storeSpec: string;
  /** The catalogue as data (status metrics per profile, spec 6.3.3). */
  readonly profiles: readonly Profile[];
  /** Seed of the stream the worker's store draws delivery ids from. */
  readonly seed: string;
  readonly now: number;
}

/** A DispatchStore method and its arguments, as they cross to the worker. */
export type DispatchCall = {
  [M in Exclude<keyof DispatchStore, "close">]: {
    readonly method: M;
    readonly args: Parameters<DispatchStore[M]>;
  };
}[Exclude<keyof DispatchStore, "close">];
