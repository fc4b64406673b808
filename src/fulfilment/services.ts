import { DEFAULT_FULFILMENT_CONFIG, type FulfilmentConfig } from "../config/fulfilment-config.ts";
import type { Rng } from "../core/rng.ts";
import { DeviceActivation } from "./activation.ts";
import type { UndeliverableAddress } from "./address-verification.ts";
import { type BillingQuery, type BillingReport, billingReport } from "./billing.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import { DeviceProperties } from "./device-properties.ts";
import { DeviceUpdate } from "./device-update.ts";
import { DeviceViews } from "./device-view.ts";
import { GatewayAdoption } from "./gateway-adoption.ts";
import { Gateways } from "./gateways.ts";
import { HardwareLogs } from "./hardware-logs.ts";
import { Orders } from "./orders.ts";
import { ReplacementShipping } from "./replacement-shipping.ts";
import { Replacements } from "./replacements.ts";
import { holdPatientless, reviewRequests } from "./request-review.ts";
import { Unlink } from "./unlink.ts";

export interface DeviceServicesDeps extends DeviceServiceDeps {
  readonly rng: Rng;
  readonly undeliverableAddresses?: readonly UndeliverableAddress[];
  /** The fulfilment simulator's settings; default DEFAULT_FULFILMENT_CONFIG. */
  readonly fulfilment?: FulfilmentConfig;
}

/** Every device-side service of the HWI API, built from one set of dependencies. */
export interface DeviceServices {
  readonly activation: DeviceActivation;
  readonly update: DeviceUpdate;
  readonly views: DeviceViews;
  readonly properties: DeviceProperties;
  readonly gateways: Gateways;
  readonly adoption: GatewayAdoption;
  readonly unlink: Unlink;
  readonly replacements: Replacements;
  readonly replacementShipping: ReplacementShipping;
  readonly hardwareLogs: HardwareLogs;
  /** Issue 4 §2: the orders the fulfilment simulator moves (lab admin API, simulator). */
  readonly orders: Orders;
  /** Device-days per account over a period (lab admin API, `rpmlab billing`). */
  billing(query: BillingQuery): Promise<BillingReport>;
  /**
   * Spec 3: after a patient's address changed (hwi-patients PUT or PATCH), requests held for
   * it are accepted once it is deliverable, and accepted ones not shipped yet are held again
   * when it is not. Returns how many were released.
   */
  reviewRequests(accountId: string, externalId: string): Promise<number>;
  /** Spec 3: devices whose patient was deleted hold their unshipped requests (no address). */
  holdPatientless(accountId: string, deviceIds: readonly string[]): Promise<void>;
}

export function createDeviceServices(deps: DeviceServicesDeps): DeviceServices {
  const full = { ...deps, fulfilment: deps.fulfilment ?? DEFAULT_FULFILMENT_CONFIG };
  const orders = new Orders(full);
  return {
    activation: new DeviceActivation(full),
    update: new DeviceUpdate(full),
    views: new DeviceViews(full),
    properties: new DeviceProperties(full),
    gateways: new Gateways(full),
    adoption: new GatewayAdoption(full),
    unlink: new Unlink(full),
    replacements: new Replacements(full),
    replacementShipping: new ReplacementShipping({ orders, store: full.store }),
    hardwareLogs: new HardwareLogs(full),
    orders,
    billing: (query) => billingReport(full, query),
    async reviewRequests(accountId, externalId) {
      return atomically(full, async (tx, events) => {
        const patient = await tx.patients.get(accountId, externalId);
        if (patient === null) return 0;
        const shipping = { catalogue: full.catalogue, config: full.fulfilment };
        const args = { accountId, patient, at: full.clock.now() };
        return (await reviewRequests(tx, events, shipping, args)).length;
      });
    },
    async holdPatientless(accountId, deviceIds) {
      if (deviceIds.length === 0) return;
      await atomically(full, async (tx, events) => {
        const shipping = { catalogue: full.catalogue, config: full.fulfilment };
        await holdPatientless(tx, events, shipping, { accountId, deviceIds, at: full.clock.now() });
      });
    },
  };
}
