import { describe } from "vitest";
import { shippedScenarioRuns } from "./run-shipped.ts";

describe("shipped scenarios: cohorts", () => {
  shippedScenarioRuns("smoke", 60_000);
  shippedScenarioRuns("onboarding", 120_000);
  shippedScenarioRuns("chf-weight-alerts", 240_000);
  shippedScenarioRuns("diabetes-supplies", 240_000);
});
