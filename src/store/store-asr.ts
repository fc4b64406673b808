import type { ListOptions, ListResult, Ms } from "./types.ts";
import type {
  AutoReorderSettings,
  NewSupplyRequest,
  StripUsage,
  SupplyRequestFilter,
  SupplyRequestPatch,
  SupplyRequestRow,
} from "./types-asr.ts";

/** The ASR module's repositories (migration 0006), part of StoreRepositories (store.ts). */

/** ASR supply requests (spec 2.7, 4.5). Ids are unique across accounts. */
export interface SupplyRequestsRepo {
  /** A pending order at step 0, its first step due at `input.nextAt(id)`. */
  create(accountId: string, input: NewSupplyRequest): Promise<SupplyRequestRow>;
  get(accountId: string, id: string): Promise<SupplyRequestRow | null>;
  /** Any account's (the shipping simulator's own look-up). */
  getById(id: string): Promise<SupplyRequestRow | null>;
  /** Newest first: the 1,000 an unpaginated list keeps (spec 8) are the latest. */
  list(
    accountId: string,
    filter?: SupplyRequestFilter,
    page?: ListOptions,
  ): Promise<ListResult<SupplyRequestRow>>;
  /** One step of the timeline (step + 1); E_STORE_NOT_FOUND when the order is gone (deleted). */
  update(id: string, patch: SupplyRequestPatch): Promise<SupplyRequestRow>;
  /** Spec 3: only a pending request can be removed. False when absent or shipped already. */
  delete(accountId: string, id: string): Promise<boolean>;
  /** Orders with a next step due at or before `until` (every one without), by due time. */
  due(until?: Ms, limit?: number): Promise<SupplyRequestRow[]>;
  /** Test strips in the shipped orders for these devices (SupplyRequestRow.forDeviceId). */
  stripsShipped(accountId: string, deviceIds: readonly string[]): Promise<number>;
  /** Shipped in [from, to), any or one account: what billing charges (spec 1.4). */
  shippedBetween(from: Ms, to: Ms, accountId?: string): Promise<SupplyRequestRow[]>;
}

/** What a glucometer's strip estimate is computed from (spec 2.7). */
export interface GlucometerSuppliesRepo {
  /**
   * Glucose measurements of these devices: all, those in [recentSince, now] (a drifting clock's
   * future readings are not recent use), and the first one's time.
   */
  usage(
    accountId: string,
    deviceIds: readonly string[],
    recent: { readonly since: Ms; readonly now: Ms },
  ): Promise<StripUsage>;
  /** Strips a client's PUT added to (or took from) these meters' count; 0 when never set. */
  offset(accountId: string, deviceIds: readonly string[]): Promise<number>;
  setOffset(accountId: string, deviceId: string, offset: number): Promise<void>;
}

/** Automatic reorder thresholds per account (spec 1.4). */
export interface AsrSettingsRepo {
  autoReorder(accountId: string): Promise<AutoReorderSettings | null>;
  /** null turns automatic reorder off. */
  setAutoReorder(accountId: string, settings: AutoReorderSettings | null): Promise<void>;
  /** Accounts with thresholds set and the ASR module enabled, by account id. */
  autoReordering(): Promise<{ accountId: string; settings: AutoReorderSettings }[]>;
}
