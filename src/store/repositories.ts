import type { Ctx } from "./context.ts";
import { toStoreError } from "./dialect.ts";
import { accountsRepo } from "./repos/accounts.ts";
import { apiKeysRepo } from "./repos/api-keys.ts";
import { asrSettingsRepo } from "./repos/asr-settings.ts";
import { billingPeriodsRepo } from "./repos/billing-periods.ts";
import { deadLettersRepo } from "./repos/dead-letters.ts";
import { devicePropertiesRepo } from "./repos/device-properties.ts";
import { devicesRepo } from "./repos/devices.ts";
import { gatewaysRepo } from "./repos/gateways.ts";
import { glucometerSuppliesRepo } from "./repos/glucometer-supplies.ts";
import { hardwareLogsRepo } from "./repos/hardware-logs.ts";
import { ingestedMessagesRepo } from "./repos/ingested-messages.ts";
import { measurementsRepo } from "./repos/measurements.ts";
import { mqttCredentialsRepo } from "./repos/mqtt-credentials.ts";
import { patientsRepo } from "./repos/patients.ts";
import { replacementsRepo } from "./repos/replacements.ts";
import { shipmentsRepo } from "./repos/shipments.ts";
import { supplyRequestsRepo } from "./repos/supply-requests.ts";
import { webhookDeliveriesRepo } from "./repos/webhook-deliveries.ts";
import { webhookOutboxRepo } from "./repos/webhook-outbox.ts";
import { webhooksRepo } from "./repos/webhooks.ts";
import { whitelistRepo } from "./repos/whitelist.ts";
import type { StoreRepositories } from "./store.ts";

/** How each repository is made over a connection or transaction (Ctx). */
const FACTORIES: { readonly [K in keyof StoreRepositories]: (ctx: Ctx) => StoreRepositories[K] } = {
  accounts: accountsRepo,
  apiKeys: apiKeysRepo,
  patients: patientsRepo,
  devices: devicesRepo,
  deviceProperties: devicePropertiesRepo,
  gateways: gatewaysRepo,
  whitelist: whitelistRepo,
  measurements: measurementsRepo,
  ingestedMessages: ingestedMessagesRepo,
  webhooks: webhooksRepo,
  deadLetters: deadLettersRepo,
  hardwareLogs: hardwareLogsRepo,
  replacements: replacementsRepo,
  mqttCredentials: mqttCredentialsRepo,
  shipments: shipmentsRepo,
  billingPeriods: billingPeriodsRepo,
  webhookOutbox: webhookOutboxRepo,
  webhookDeliveries: webhookDeliveriesRepo,
  supplyRequests: supplyRequestsRepo,
  glucometerSupplies: glucometerSuppliesRepo,
  asrSettings: asrSettingsRepo,
};

/**
 * A transaction's repositories as own enumerable getters (a spread copy, as tests make to swap
 * one repository, still has them all): each makes its repository on first use and keeps it.
 */
const CTX = Symbol("ctx");
type LazyRepositories = StoreRepositories & { readonly [CTX]: Ctx };
const LAZY: PropertyDescriptorMap = {};
for (const name of Object.keys(FACTORIES) as (keyof StoreRepositories)[]) {
  LAZY[name] = {
    enumerable: true,
    configurable: true,
    get(this: LazyRepositories) {
      const repo = guard(this[CTX], name, FACTORIES[name](this[CTX]) as object);
      Object.defineProperty(this, name, { value: repo, enumerable: true });
      return repo;
    },
  };
}

/**
 * Every repository over one transaction, with driver errors mapped to codes, each made when
 * first used: most transactions touch two or three of the 21, and making all of them (their
 * methods, each wrapped) made an empty transaction on SQLite :memory: cost 52–96 µs instead of
 * 23–28 µs (2026-11-28) — more than a gateway check-in's statements.
 */
export function transactionRepositories(ctx: Ctx): StoreRepositories {
  return Object.defineProperties({ [CTX]: ctx }, LAZY) as LazyRepositories;
}

/** Every repository over the store's connection, made at once (the store is made once). */
export function buildRepositories(ctx: Ctx): StoreRepositories {
  const repos: Record<string, unknown> = {};
  for (const name of Object.keys(FACTORIES) as (keyof StoreRepositories)[]) {
    repos[name] = guard(ctx, name, FACTORIES[name](ctx) as object);
  }
  return repos as unknown as StoreRepositories;
}

/**
 * Wraps each method so a driver error leaves the store as an RpmlabError with a stable code
 * (unique → E_STORE_CONFLICT, foreign key → E_STORE_NOT_FOUND, …), named after the method.
 */
function guard<T extends object>(ctx: Ctx, name: string, repo: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(repo)) {
    if (typeof value !== "function") {
      out[key] = value;
      continue;
    }
    const fn = value as (...args: unknown[]) => Promise<unknown>;
    out[key] = async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (error) {
        throw toStoreError(ctx.d, error, `${name}.${key}`);
      }
    };
  }
  return out as T;
}
