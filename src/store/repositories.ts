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

/** Every repository over one connection or transaction, with driver errors mapped to codes. */
export function buildRepositories(ctx: Ctx): StoreRepositories {
  const g = <T extends object>(name: string, repo: T) => guard(ctx, name, repo);
  return {
    accounts: g("accounts", accountsRepo(ctx)),
    apiKeys: g("apiKeys", apiKeysRepo(ctx)),
    patients: g("patients", patientsRepo(ctx)),
    devices: g("devices", devicesRepo(ctx)),
    deviceProperties: g("deviceProperties", devicePropertiesRepo(ctx)),
    gateways: g("gateways", gatewaysRepo(ctx)),
    whitelist: g("whitelist", whitelistRepo(ctx)),
    measurements: g("measurements", measurementsRepo(ctx)),
    ingestedMessages: g("ingestedMessages", ingestedMessagesRepo(ctx)),
    webhooks: g("webhooks", webhooksRepo(ctx)),
    deadLetters: g("deadLetters", deadLettersRepo(ctx)),
    hardwareLogs: g("hardwareLogs", hardwareLogsRepo(ctx)),
    replacements: g("replacements", replacementsRepo(ctx)),
    mqttCredentials: g("mqttCredentials", mqttCredentialsRepo(ctx)),
    shipments: g("shipments", shipmentsRepo(ctx)),
    billingPeriods: g("billingPeriods", billingPeriodsRepo(ctx)),
    webhookOutbox: g("webhookOutbox", webhookOutboxRepo(ctx)),
    webhookDeliveries: g("webhookDeliveries", webhookDeliveriesRepo(ctx)),
    supplyRequests: g("supplyRequests", supplyRequestsRepo(ctx)),
    glucometerSupplies: g("glucometerSupplies", glucometerSuppliesRepo(ctx)),
    asrSettings: g("asrSettings", asrSettingsRepo(ctx)),
  };
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
