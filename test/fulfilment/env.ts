import { expect } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { type FulfilmentConfig, fulfilmentConfig } from "../../src/config/fulfilment-config.ts";
import { type ErrorCode, RpmlabError } from "../../src/core/errors.ts";
import { TypedEvents } from "../../src/core/events.ts";
import type { FieldErrors } from "../../src/core/field-errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { FulfilmentEvents } from "../../src/fulfilment/events.ts";
import { createDeviceServices, type DeviceServices } from "../../src/fulfilment/services.ts";
import { FulfilmentSimulator } from "../../src/fulfilment/simulator.ts";
import type { Store } from "../../src/store/store.ts";
import type { AccountRow, PatientRow } from "../../src/store/types.ts";
import type { NewMeasurement } from "../../src/store/types-ingest.ts";

/** 2024-10-16T04:10:00Z, the wire-formats sample's timestamp. */
export const T0 = 1_729_051_800_000;
export const DAY = 86_400_000;
/** A gateway id of the wire-formats samples. */
export const GW = "297056120BD7";
export const GW2 = "FED091A643FF";
export const IMEI = "356938035643809";

export const catalogue = Catalogue.load();

export type Recorded = {
  [K in keyof FulfilmentEvents]: { name: K; payload: FulfilmentEvents[K] };
}[keyof FulfilmentEvents];

/** How each store under test is opened: a fresh, migrated, empty one per test. */
export interface FulfilmentHarness {
  open(deps: { clock: VirtualClock; rng: Rng }): Promise<Store>;
  cleanup?(): Promise<void>;
}

/** Filled in before each test. */
export interface FulfilmentEnv {
  store: Store;
  clock: VirtualClock;
  rng: Rng;
  events: TypedEvents<FulfilmentEvents>;
  recorded: Recorded[];
  services: DeviceServices;
  account: AccountRow;
  /** The fulfilment settings the services run with (QUIET unless a test says otherwise). */
  config: FulfilmentConfig;
}

/**
 * Fulfilment without surprises: no stock shortage, delivery issue or carrier hold, so a
 * section not about them sees the plain path. Tests about them set their own probabilities.
 */
export const QUIET_OVERRIDES = {
  probabilities: {
    stock_shortage: 0,
    delivery_issue: 0,
    delivery_issue_signature: 0,
    carrier_hold: 0,
  },
};
export const QUIET = fulfilmentConfig(QUIET_OVERRIDES);

/** Rebuilds the env's services with other fulfilment settings (over QUIET). */
export function useConfig(env: FulfilmentEnv, ...layers: unknown[]): FulfilmentConfig {
  env.config = fulfilmentConfig(QUIET_OVERRIDES, ...layers);
  env.services = createDeviceServices({
    store: env.store,
    catalogue,
    clock: env.clock,
    events: env.events,
    rng: env.rng,
    fulfilment: env.config,
  });
  return env.config;
}

export async function fillEnv(env: FulfilmentEnv, harness: FulfilmentHarness): Promise<void> {
  const clock = new VirtualClock({ startMs: T0 });
  const rng = new Rng("fulfilment");
  const store = await harness.open({ clock, rng });
  const events = new TypedEvents<FulfilmentEvents>();
  const recorded: Recorded[] = [];
  for (const name of [
    "fulfilment.status",
    "replacement.status",
    "device.activated",
    "whitelist.changed",
    "shipment.scheduled",
    "hardware.delivered",
  ] as const) {
    events.on(name, (payload) => recorded.push({ name, payload } as Recorded));
  }
  env.store = store;
  env.clock = clock;
  env.rng = rng;
  env.events = events;
  env.recorded = recorded;
  env.config = QUIET;
  env.services = createDeviceServices({ store, catalogue, clock, events, rng, fulfilment: QUIET });
  env.account = await store.accounts.create({ clientDomain: "clinic", environment: "development" });
}

export function advance(env: FulfilmentEnv, ms: number): void {
  env.clock.runSync({ until: env.clock.now() + ms });
}

/** Events of one kind, in order. */
export function eventsOf<K extends keyof FulfilmentEvents>(
  env: FulfilmentEnv,
  name: K,
): FulfilmentEvents[K][] {
  return env.recorded.filter((r) => r.name === name).map((r) => r.payload as FulfilmentEvents[K]);
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<RpmlabError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a rejection").toBeInstanceOf(RpmlabError);
  return error as RpmlabError;
}

export async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<RpmlabError> {
  const error = await rejection(promise);
  expect(error.code).toBe(code);
  return error;
}

/** The DRF-style body of a validation error (fails unless it is one). */
export async function fieldErrors(promise: Promise<unknown>): Promise<FieldErrors> {
  const error = await expectCode(promise, "E_API_VALIDATION");
  return error.details.fields as FieldErrors;
}

/** A patient whose address verifies (or is Invalid with `invalid`). */
export async function patientWithAddress(
  env: FulfilmentEnv,
  externalId: string,
  over: Partial<PatientRow> = {},
): Promise<PatientRow> {
  return env.store.patients.create(env.account.id, {
    externalId,
    name: "Pat One",
    address: "12 Main Street",
    city: "Irvine",
    state: "CA",
    zipCode: "92614",
    addressStatus: "Verified",
    addressVerifiedBy: "internal",
    ...over,
  });
}

/** Puts a gateway in the lab's inventory, as a status report over MQTT would. */
export function knownGateway(env: FulfilmentEnv, uuid: string = GW) {
  return env.store.gateways.updateStatus(uuid, {
    lastSignalStrength: 18,
    lastCheckinTime: env.clock.now(),
  });
}

/** Activates, then moves the clock on a second, so list order (by created) is activation order. */
export async function activate(env: FulfilmentEnv, body: unknown) {
  try {
    return await env.services.activation.activate(env.account.id, body);
  } finally {
    advance(env, 1000);
  }
}

/** An orphan reading of a gateway slot (or IMEI), as ingestion keeps it before activation. */
export function orphan(over: Partial<NewMeasurement> = {}): NewMeasurement {
  return {
    accountId: null,
    deviceId: null,
    deviceName: null,
    patientExternalId: null,
    source: "F0:11:22:33:44:55",
    hardwareUuid: GW,
    sensorCode: "10",
    sensorId: null,
    metric: "pulse",
    value1: 86,
    value2: null,
    timestamp: T0 - DAY,
    timezoneOffset: -4,
    estimatedTimestamp: false,
    filterParams: null,
    measurementIndex: 1,
    deviceLogIndex: null,
    messageId: null,
    characteristicUuid: null,
    raw: null,
    ...over,
  };
}

/** A fulfilment simulator on the env's store, clock and bus (stopped by `stopSimulators`). */
const simulators: FulfilmentSimulator[] = [];
export async function startSimulator(env: FulfilmentEnv): Promise<FulfilmentSimulator> {
  const sim = new FulfilmentSimulator({
    store: env.store,
    catalogue,
    clock: env.clock,
    events: env.events,
    fulfilment: env.config,
  });
  simulators.push(sim);
  await sim.start();
  return sim;
}

export async function stopSimulators(): Promise<void> {
  for (const sim of simulators.splice(0)) await sim.stop();
}

/**
 * Drives the virtual clock to `until`, one due transition at a time, letting each finish its
 * store work before time moves on (a PostgreSQL transaction takes real time).
 */
export async function drive(env: FulfilmentEnv, sim: FulfilmentSimulator, until: number) {
  await sim.whenIdle();
  for (;;) {
    const next = sim.nextDue();
    if (next === undefined || next > until) break;
    env.clock.runSync({ until: Math.max(next, env.clock.now()) });
    await sim.whenIdle();
  }
  env.clock.runSync({ until });
}

/** Fulfilment statuses announced for one device, in order. */
export function statusesOf(env: FulfilmentEnv, deviceId: string): string[] {
  return eventsOf(env, "fulfilment.status")
    .filter((e) => e.device.id === deviceId)
    .map((e) => e.status);
}

/** A fulfilment request for a patient with a verified address. */
export async function request(
  env: FulfilmentEnv,
  externalId = "P-1",
  over: Record<string, unknown> = {},
  device = "Vendor BPM - Wide Range",
) {
  if ((await env.store.patients.get(env.account.id, externalId)) === null) {
    await patientWithAddress(env, externalId);
  }
  return activate(env, { device: { name: device }, patient: { external_id: externalId }, ...over });
}
