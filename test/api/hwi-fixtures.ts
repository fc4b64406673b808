import type { LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { fulfilmentConfig } from "../../src/config/fulfilment-config.ts";
import { Rng } from "../../src/core/rng.ts";
import { createDeviceServices, type DeviceServices } from "../../src/fulfilment/services.ts";
import type { NewMeasurement } from "../../src/store/types-ingest.ts";
import { apiKey, hwi, type Lab, send, T0, type TestAccount } from "./helpers.ts";

/** Fixtures of the HWI device, gateway and measurement tests. */

export const DAY = 86_400_000;
/** Gateway ids of the wire-formats samples. */
export const GW = "297056120BD7";
export const GW2 = "FED091A643FF";
export const IMEI = "356938035643809";
export const BPM = "Vendor BPM - Wide Range";

export const catalogue = Catalogue.load();

export type Method = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";

/** A JSON call on the dev account's hwi paths. */
export function hwiCall(lab: Lab, account: TestAccount = lab.dev) {
  return (method: Method, path: string, body?: unknown) =>
    send(lab.app, method, hwi(account, path), account.key, body);
}

/** GET of an absolute URL the API answered (next, previous), with the account's key. */
export function follow(lab: Lab, url: string, account: TestAccount = lab.dev) {
  const { pathname, search } = new URL(url);
  return lab.app.inject({ method: "GET", url: pathname + search, headers: apiKey(account.key) });
}

/** The lab's device services over the app's store: what MQTT or a scenario would drive. */
export function labServices(lab: Lab): DeviceServices {
  return createDeviceServices({
    store: lab.store,
    catalogue,
    clock: lab.clock,
    events: lab.events,
    rng: new Rng("api-test-services"),
  });
}

/** Puts a gateway in the lab's inventory, as its first status report (a check-in) over MQTT would. */
export function knownGateway(lab: Lab, uuid: string = GW, signal = 18) {
  return lab.store.gateways.updateStatus(uuid, {
    lastSignalStrength: signal,
    lastCheckinTime: lab.clock.now(),
  });
}

/** POST hwi-devices/, expecting 201; returns the device record. Moves the clock a second on. */
export async function activate(lab: Lab, body: unknown, account: TestAccount = lab.dev) {
  const res = await hwiCall(lab, account)("POST", "hwi-devices/", body);
  expect(res.statusCode, res.body).toBe(201);
  lab.advance(1000);
  return res.json() as { id: string; status: string; hardware_uuid: string | null } & Record<
    string,
    unknown
  >;
}

/** A stored reading of `deviceId` (as ingestion would keep it). */
export function reading(
  account: TestAccount,
  deviceId: string,
  over: Partial<NewMeasurement> = {},
): NewMeasurement {
  return {
    accountId: account.account.id,
    deviceId,
    deviceName: BPM,
    patientExternalId: "P-1",
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
    filterParams: { measurement_index: 1 },
    measurementIndex: 1,
    deviceLogIndex: null,
    messageId: null,
    characteristicUuid: null,
    raw: null,
    created: T0 - DAY + 30_000,
    ...over,
  };
}

/** `n` readings of one device, one a minute back from `end` (exclusive), oldest first. */
export function series(
  account: TestAccount,
  deviceId: string,
  n: number,
  end: number,
  over: Partial<NewMeasurement> = {},
): NewMeasurement[] {
  return Array.from({ length: n }, (_, i) => {
    const timestamp = end - (n - i) * 60_000;
    return reading(account, deviceId, {
      timestamp,
      created: timestamp + 30_000,
      measurementIndex: i + 1,
      filterParams: { measurement_index: i + 1 },
      ...over,
    });
  });
}

/** The JSON body of a 200. */
export function ok<T = unknown>(res: LightMyRequestResponse): T {
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as T;
}

export interface Envelope<T = Record<string, unknown>> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** A deliverable address (address verification passes it). */
export const ADDRESS = {
  address: "12 Main Street",
  city: "Irvine",
  state: "CA",
  zip_code: "92614",
};

/** Fulfilment with no seeded surprises: no shortage, failed attempt or carrier hold. */
export const QUIET = fulfilmentConfig({
  probabilities: {
    stock_shortage: 0,
    delivery_issue: 0,
    delivery_issue_signature: 0,
    carrier_hold: 0,
  },
});
