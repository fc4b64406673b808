import type { Profile } from "../catalogue/schema.ts";

/** What the ingestion worker starts with (tsWorkerData). */
export interface WorkerInit {
  /** The store to open: the same database as the main thread's (a `sqlite:PATH` file). */
  readonly storeSpec: string;
  /** The catalogue, as data (a Catalogue is rebuilt from it in the thread). */
  readonly profiles: readonly Profile[];
  readonly now: number;
}
