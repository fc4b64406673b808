import { describe, expect, it } from "vitest";
import { parseScenario } from "../../src/scenario/load.ts";
import { renderText } from "../../src/scenario/report.ts";
import { runScenario } from "../../src/scenario/runner.ts";

/**
 * Ordered kits delivered while the broker is down (README "Events": broker.outage): the gateway
 * and the cellular glucometer power on all the same, keep what they take, and send it once the
 * broker is back. Their first connection failing ended the run with E_BROKER_UNAVAILABLE.
 */
const SCENARIO = `scenario: delivered-in-outage
seed: 77
clock: { start: 2026-01-05T00:00:00Z }
duration: 9d
accounts:
  - id: clinic
    webhooks: [{ id: main, events: [MEASUREMENT], url: lab }]
cohorts:
  - { id: gw, account: clinic, count: 1, model: hypertensive, kit: [Vendor BPM - Wide Range], connectivity: gateway, onboarding: ordered }
  - { id: cell, account: clinic, count: 1, model: type2-diabetic, kit: [Vendor Cellular Glucometer], connectivity: cellular, onboarding: ordered }
fulfilment:
  probabilities: { stock_shortage: 0, delivery_issue: 0, delivery_issue_signature: 0, carrier_hold: 0 }
events:
  - { at: 1d 00:00, action: broker.outage, for: 6d }
expect:
  - fulfilment: { status: Delivered, count: 2 }
  - readings: { missing: 0, stored: ">= 5" }
`;

describe("a kit delivered during a broker outage", () => {
  it("powers on, keeps its readings, and sends them when the broker is back", async () => {
    const report = await runScenario(
      parseScenario(SCENARIO, "/scenarios/delivered-in-outage.yaml"),
    );
    expect(report.passed, renderText(report)).toBe(true);
  }, 120_000);
});
