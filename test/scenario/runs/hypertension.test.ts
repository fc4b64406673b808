import { describe } from "vitest";
import { shippedScenarioRuns } from "./run-shipped.ts";

describe("shipped scenarios: the 30-day cohort", () => {
  shippedScenarioRuns("hypertension-cohort-30d", 480_000);
});
