import { afterAll, describe, expect, it } from "vitest";
import { parseScenario } from "../../src/scenario/load.ts";
import { runScenario } from "../../src/scenario/runner.ts";
import { openStore } from "../../src/store/open.ts";
import { POSTGRES_SHOWN, postgresHarness } from "../support/postgres.ts";

const pgh = await postgresHarness("Scenario determinism on PostgreSQL");

/**
 * Kits ordered and gateways replaced, shipped and delivered on the lab's clock, then readings.
 * On PostgreSQL each shipment's transition commits after a network round trip; the clock must
 * wait for it, or the transition (its special-order webhook's updated_on, the box powering on)
 * lands a step later, run by run (issue 7 §2).
 */
const SHIPPING = `
scenario: shipping
seed: 5
clock: { start: 2026-03-09T00:00:00Z }
duration: 5d
accounts:
  - id: clinic
    webhooks: [{ id: main, events: [MEASUREMENT, SPECIAL_ORDER, FULFILLMENT], url: lab }]
cohorts:
  - { id: gw, account: clinic, count: 3, model: hypertensive, kit: [Vendor BPM - Wide Range, Vendor Scale], connectivity: gateway }
  - { id: cell, account: clinic, count: 2, model: type2-diabetic, kit: [Vendor Cellular Glucometer], connectivity: cellular, onboarding: ordered }
fulfilment:
  durations: { processing: 1d, in_transit: 1d..2d }
  probabilities: { stock_shortage: 0, delivery_issue: 0, delivery_issue_signature: 0, carrier_hold: 0 }
events:
  - { at: 1d 14:00, action: gateway.replace, target: "gw[0-1]" }
expect:
  - fulfilment: { status: Delivered, count: ">= 4" }
  - readings: { missing: 0 }
`;

if (pgh !== undefined) {
  afterAll(() => pgh.close());

  describe(`scenario runs on PostgreSQL (${POSTGRES_SHOWN})`, () => {
    it("give the digest and counts of the same run in memory", async () => {
      const scenario = parseScenario(SHIPPING, "/scenarios/shipping.yaml");
      const inMemory = await runScenario(scenario);
      expect(inMemory.passed).toBe(true);
      for (let run = 0; run < 2; run++) {
        const { spec, schema } = pgh.nextSpec();
        const onPostgres = await runScenario(
          { ...scenario, transports: { ...scenario.transports, store: spec } },
          { openStore: (s, options) => pgh.locked(() => openStore(s, options)) },
        );
        await pgh.dropSchema(schema);
        expect(onPostgres.counts, `PostgreSQL run ${run + 1}`).toEqual(inMemory.counts);
        expect(onPostgres.digest, `PostgreSQL run ${run + 1}`).toBe(inMemory.digest);
      }
    }, 180_000);
  });
}
