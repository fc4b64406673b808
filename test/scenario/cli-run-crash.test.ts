import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../catalogue/cli-io.ts";

// A run that throws what is not an RpmlabError: a fault of rpmlab itself, mid-run.
vi.mock("../../src/scenario/runner.ts", () => ({
  runScenario: () => Promise.reject(new TypeError("Cannot read properties of undefined")),
}));

const SMOKE = fileURLToPath(new URL("../../scenarios/smoke.yaml", import.meta.url));

describe("rpmlab run, when rpmlab itself fails mid-run", () => {
  it("exits 3 as a run that could not end, not 1 (expectations), and keeps the stack", async () => {
    const { code, stdout, stderr } = await runCli("run", SMOKE, "--no-progress");
    expect(code).toBe(3);
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^rpmlab: E_SCENARIO_FAILED: scenario smoke did not run to its end: unexpected error: TypeError: Cannot read properties of undefined\n {4}at /,
    );
  });
});
