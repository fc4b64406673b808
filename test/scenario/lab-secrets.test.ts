import { describe, expect, it } from "vitest";
import { parseScenario } from "../../src/scenario/load.ts";
import { runScenario } from "../../src/scenario/runner.ts";

const TEXT = `scenario: secrets
seed: 7
clock: { start: 2026-01-05T00:00:00Z }
duration: 1h
accounts: [{ id: clinic }]
cohorts:
  - { id: home, account: clinic, count: 1, model: hypertensive, kit: [Vendor Scale], connectivity: gateway, adherence: 1, schedule: ["08:00"] }
`;

/**
 * A run's lab listens on HTTP (`rpmlab demo --host 0.0.0.0` for a demo on a network): the seed
 * reproduces readings, not credentials. The seed is printed and shipped in scenario files (the
 * demo's is 7, in the README), so an admin token drawn from it would be known to anyone.
 */
describe("a scenario run's lab credentials", () => {
  it("are fresh at each run of the same seed: admin token and API key", async () => {
    const tokens: string[] = [];
    const keys: string[] = [];
    for (let run = 0; run < 2; run++) {
      const report = await runScenario(parseScenario(TEXT, "/scenarios/secrets.yaml"), {
        onReady: ({ lab }) => {
          tokens.push(lab.admin_token);
          keys.push(lab.api_key);
        },
      });
      expect(report.passed).toBe(true);
    }
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).not.toBe(tokens[1]);
    expect(keys[0]).not.toBe(keys[1]);
  }, 60_000);
});
