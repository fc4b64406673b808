import { expect } from "vitest";
import type { Clock } from "../../../src/core/clock.ts";
import { type ErrorCode, RpmlabError } from "../../../src/core/errors.ts";
import type { Rng } from "../../../src/core/rng.ts";
import type { VirtualClock } from "../../../src/core/virtual-clock.ts";
import type { Store } from "../../../src/store/store.ts";
import type { AccountRow } from "../../../src/store/types.ts";
import type { NewMeasurement } from "../../../src/store/types-ingest.ts";

/** 2024-10-16T04:10:00Z, the wire-formats sample's timestamp. */
export const T0 = 1_729_051_800_000;
export const MINUTE = 60_000;
export const DAY = 86_400_000;

export interface OpenedStore {
  readonly store: Store;
  /** Opens a second store on the same database, when the implementation has one to share. */
  readonly reopen?: () => Promise<Store>;
}

/** What each implementation's test file gives the contract (aedes-persistence style). */
export interface StoreHarness {
  /** Whether a second store can open the same database (false for :memory:). */
  readonly persistent: boolean;
  /** A fresh, migrated, empty store on the given clock and Rng. */
  open(deps: { clock: Clock; rng: Rng }): Promise<OpenedStore>;
  /** Runs after each test, once its stores are closed (temp files, schemas). */
  cleanup?(): Promise<void>;
  /** Every row of a table as stored, to check what never reaches the database. */
  rawRows?(table: string): Promise<unknown[]>;
}

/** Filled in before each test; sections read it inside their tests. */
export interface ContractEnv {
  store: Store;
  clock: VirtualClock;
  reopen: (() => Promise<Store>) | undefined;
  rawRows: ((table: string) => Promise<unknown[]>) | undefined;
}

export function advance(env: ContractEnv, ms: number): void {
  env.clock.runSync({ until: env.clock.now() + ms });
}

let domains = 0;
export function newAccount(
  env: ContractEnv,
  over: { clientDomain?: string; environment?: "development" | "production" } = {},
): Promise<AccountRow> {
  domains++;
  return env.store.accounts.create({
    clientDomain: over.clientDomain ?? `clinic-${domains}`,
    environment: over.environment ?? "development",
  });
}

export async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(RpmlabError);
  expect((error as RpmlabError).code).toBe(code);
}

/** An orphan pulse record from gateway GW-1; override what the test is about. */
export function reading(over: Partial<NewMeasurement> = {}): NewMeasurement {
  return {
    accountId: null,
    deviceId: null,
    deviceName: null,
    patientExternalId: null,
    source: "F0:11:22:33:44:55",
    hardwareUuid: "297056120BD7",
    sensorCode: "10",
    sensorId: null,
    metric: "pulse",
    value1: 86,
    value2: null,
    timestamp: T0,
    timezoneOffset: -4,
    estimatedTimestamp: false,
    filterParams: null,
    measurementIndex: null,
    deviceLogIndex: null,
    messageId: null,
    characteristicUuid: null,
    raw: null,
    ...over,
  };
}
