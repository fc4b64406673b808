import { afterEach, beforeEach, describe } from "vitest";
import { type FulfilmentEnv, type FulfilmentHarness, fillEnv, stopSimulators } from "./env.ts";
import { activationSection } from "./sections/activation.ts";
import { activationRulesSection } from "./sections/activation-rules.ts";
import { adoptionSection } from "./sections/adoption.ts";
import { billingSection } from "./sections/billing.ts";
import { deviceUpdateSection } from "./sections/device-update.ts";
import { deviceViewSection } from "./sections/device-view.ts";
import { gatewaysSection } from "./sections/gateways.ts";
import { hardwareLogsSection } from "./sections/hardware-logs.ts";
import { ordersSection } from "./sections/orders.ts";
import { propertiesSection } from "./sections/properties.ts";
import { replacementOrdersSection } from "./sections/replacement-orders.ts";
import { replacementShippingSection } from "./sections/replacement-shipping.ts";
import { replacementsSection } from "./sections/replacements.ts";
import { shipmentsSection } from "./sections/shipments.ts";
import { unlinkSection } from "./sections/unlink.ts";
import { whitelistRoomSection } from "./sections/whitelist-room.ts";

/**
 * The device services against one store implementation: every rule as an integrator would see
 * it (statuses, field errors, events, logs). Each store's test file calls this with a harness
 * that opens a fresh store per test, as the store contract does.
 */
export function fulfilmentSuite(name: string, harness: FulfilmentHarness): void {
  describe(`device services on ${name}`, () => {
    const env = {} as FulfilmentEnv;
    beforeEach(async () => {
      await fillEnv(env, harness);
    });
    afterEach(async () => {
      await stopSimulators();
      await env.store.close();
      await harness.cleanup?.();
    });
    activationSection(env);
    activationRulesSection(env);
    adoptionSection(env);
    deviceUpdateSection(env);
    deviceViewSection(env);
    propertiesSection(env);
    gatewaysSection(env);
    unlinkSection(env);
    replacementsSection(env);
    replacementShippingSection(env);
    hardwareLogsSection(env);
    shipmentsSection(env);
    ordersSection(env);
    replacementOrdersSection(env);
    billingSection(env);
    whitelistRoomSection(env);
  });
}
