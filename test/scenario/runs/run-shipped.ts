import { expect, it } from "vitest";
import { loadScenario } from "../../../src/scenario/load.ts";
import { renderText } from "../../../src/scenario/report.ts";
import { runScenario } from "../../../src/scenario/runner.ts";

/**
 * Issue 7 §4: a shipped scenario runs to its end in CI and every expectation it states holds.
 * The whole report is the failure message, so a CI log says which expectation broke and why.
 */
export function shippedScenarioRuns(name: string, timeoutMs: number): void {
  it(
    `${name}: every expectation holds`,
    async () => {
      const report = await runScenario(loadScenario(`scenarios/${name}.yaml`));
      expect(report.expectations.length).toBeGreaterThan(0);
      expect(report.passed, renderText(report)).toBe(true);
      // Nothing the devices took may go missing in any shipped scenario.
      expect(report.counts.readings.missing, renderText(report)).toBe(0);
      // No shipped scenario sends what ingestion cannot use: its faults lose or delay, never garble.
      expect(report.dead_letters.count, renderText(report)).toBe(0);
    },
    timeoutMs,
  );
}
