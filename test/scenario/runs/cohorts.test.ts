import { describe } from "vitest";
import { shippedScenarioRuns } from "./run-shipped.ts";

describe("shipped scenarios: cohorts", () => {
  shippedScenarioRuns("smoke", 60_000);
  // The demo's week at full speed (`rpmlab run scenarios/*.yaml` takes it with the others).
  shippedScenarioRuns("demo", 60_000);
  shippedScenarioRuns("onboarding", 120_000);
  shippedScenarioRuns("chf-weight-alerts", 240_000);
  shippedScenarioRuns("diabetes-supplies", 240_000);
});
