import { describe } from "vitest";
import { shippedScenarioRuns } from "./run-shipped.ts";

describe("shipped scenarios: faults", () => {
  shippedScenarioRuns("broker-chaos", 120_000);
  shippedScenarioRuns("cellular-outage", 120_000);
  shippedScenarioRuns("webhook-endpoint-down", 120_000);
  shippedScenarioRuns("gateway-replacement", 120_000);
});
