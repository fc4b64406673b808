import { describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";

const START = Date.UTC(2026, 0, 5);

/** An account, a webhook and `deliveries` deliveries, then a patient and a device: its id. */
async function deviceIdAfter(store: Store, deliveries: number): Promise<string> {
  const account = await store.accounts.create({ clientDomain: "ids", environment: "production" });
  const webhook = await store.webhooks.create(account.id, {
    endpoint: "https://platform.example/hook",
    event: "MEASUREMENT",
  });
  await store.webhookDeliveries.createMany(
    Array.from({ length: deliveries }, () => ({
      accountId: account.id,
      webhookId: webhook.id,
      event: "MEASUREMENT" as const,
      body: "{}",
      retry: true,
    })),
  );
  const patient = await store.patients.create(account.id, { externalId: "P-1" });
  return (
    await store.devices.create(account.id, {
      name: "Vendor Scale",
      patientId: patient.id,
      status: "Active",
    })
  ).id;
}

describe("store ids (a seeded stream per store)", () => {
  it("webhook deliveries draw their ids from a stream of their own: the lab's other ids do not depend on how many were made before", async () => {
    const ids: string[] = [];
    for (const deliveries of [0, 1, 25]) {
      const store = await openStore("memory", {
        clock: new VirtualClock({ startMs: START }),
        rng: new Rng("ids"),
      });
      ids.push(await deviceIdAfter(store, deliveries));
      await store.close();
    }
    // The same device id: an order made after deliveries gets the same id too, and seeds its
    // shipment with it (fulfilment/shipment-plan.ts).
    expect(new Set(ids).size).toBe(1);
  });
});
