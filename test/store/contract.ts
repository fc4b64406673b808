import { afterEach, beforeEach, describe } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { Store } from "../../src/store/store.ts";
import { accountsContract } from "./contract/accounts.ts";
import { asrContract } from "./contract/asr.ts";
import { devicesContract } from "./contract/devices.ts";
import { devicesListContract } from "./contract/devices-list.ts";
import { type ContractEnv, type StoreHarness, T0 } from "./contract/env.ts";
import { gatewaysContract } from "./contract/gateways.ts";
import { ingestContract } from "./contract/ingest.ts";
import { ingestBulkContract } from "./contract/ingest-bulk.ts";
import { lifecycleContract } from "./contract/lifecycle.ts";
import { measurementQueryContract } from "./contract/measurement-query.ts";
import { mqttCredentialsContract } from "./contract/mqtt-credentials.ts";
import { patientsContract } from "./contract/patients.ts";
import { registryContract } from "./contract/registry.ts";
import { shipmentsContract } from "./contract/shipments.ts";
import { webhookDeliveryContract } from "./contract/webhook-delivery.ts";

export type { StoreHarness } from "./contract/env.ts";

/**
 * The one contract every Store implementation passes (DESIGN.md "Testing"; in the manner of
 * aedes-persistence's abstract.js): each implementation's test file calls this with a harness
 * that opens a fresh, empty store per test.
 */
export function storeContract(name: string, harness: StoreHarness): void {
  describe(`Store contract: ${name}`, () => {
    const env = {} as ContractEnv;
    const opened: Store[] = [];

    beforeEach(async () => {
      const clock = new VirtualClock({ startMs: T0 });
      const rng = new Rng("store-contract");
      const { store, reopen } = await harness.open({ clock, rng });
      opened.push(store);
      env.store = store;
      env.clock = clock;
      env.rawRows = harness.rawRows?.bind(harness);
      env.reopen =
        reopen &&
        (async () => {
          const second = await reopen();
          opened.push(second);
          return second;
        });
    });

    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
      await harness.cleanup?.();
    });

    lifecycleContract(env, harness.persistent);
    accountsContract(env);
    patientsContract(env);
    devicesContract(env);
    devicesListContract(env);
    gatewaysContract(env);
    ingestContract(env);
    ingestBulkContract(env);
    measurementQueryContract(env);
    registryContract(env);
    mqttCredentialsContract(env);
    shipmentsContract(env);
    webhookDeliveryContract(env, harness.persistent);
    asrContract(env);
  });
}
