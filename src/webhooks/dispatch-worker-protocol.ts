import type { Profile } from "../catalogue/schema.ts";
import type { DispatchStore, ExpandResult } from "./dispatch-store.ts";
import type { PackedClaims, PackedOutcomes } from "./dispatch-wire.ts";

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

type Rest<T extends readonly unknown[]> = T extends readonly [unknown, ...infer R] ? R : never;

/**
 * A DispatchStore method and its arguments, as they cross to the worker: a round's outcomes in
 * columns (dispatch-wire.ts), the rest as they are.
 */
export type DispatchCall =
  | {
      readonly method: "exchange";
      readonly args: readonly [PackedOutcomes, ...Rest<Parameters<DispatchStore["exchange"]>>];
    }
  | {
      [M in Exclude<keyof DispatchStore, "close" | "exchange">]: {
        readonly method: M;
        readonly args: Parameters<DispatchStore[M]>;
      };
    }[Exclude<keyof DispatchStore, "close" | "exchange">];

/** expand()'s result as it crosses back: the claimed deliveries in columns. */
export interface WireExpandResult extends Omit<ExpandResult, "claimed"> {
  readonly claimed: PackedClaims;
}

/** exchange()'s result as it crosses back: every claim's rows in columns, in turn. */
export interface WireExchangeResult {
  readonly claims: readonly {
    readonly webhookId: string;
    readonly count: number;
    readonly exhausted: boolean;
  }[];
  readonly rows: PackedClaims;
}
