import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../catalogue/cli-io.ts";
import { runToExit } from "../e2e/cli-process.ts";

const SCENARIOS = fileURLToPath(new URL("../../scenarios", import.meta.url));

describe("rpmlab scenario validate", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-scenario-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints ok FILE for each valid file and exits 0", async () => {
    const files = ["smoke.yaml", "broker-chaos.yaml"].map((f) => join(SCENARIOS, f));
    const { code, stdout, stderr } = await runCli("scenario", "validate", ...files);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toBe(files.map((f) => `ok ${f}`).join(""));
  });

  it("ends with its own exit code when the reader of its output has gone (| head)", async () => {
    // Before: an EPIPE stack trace and exit code 1 once stdout's reader closed.
    const files = ["smoke.yaml", "broker-chaos.yaml"].map((f) => join(SCENARIOS, f));
    const { code, err } = await runToExit(
      ["scenario", "validate", ...files],
      30_000,
      async (child) => {
        child.stdout?.destroy();
      },
    );
    expect(err).toBe("");
    expect(code).toBe(0);
  }, 40_000);

  it("so does rpmlab run when the reader of its progress has gone (2>&1 | head)", async () => {
    const smoke = join(SCENARIOS, "smoke.yaml");
    const { code } = await runToExit(["run", smoke], 60_000, async (child) => {
      child.stderr?.destroy();
    });
    expect(code).toBe(0);
  }, 70_000);

  it("lists every problem as file:line:column: path: message and exits 2, as run does", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(
      bad,
      [
        "scenario: bad",
        "seed: 1",
        "clock: { start: 2026-01-05T00:00:00Z }",
        "duration: 1d",
        "accounts: [{ id: clinic }]",
        "cohorts:",
        "  - { id: htn, account: clinic, count: 2, model: hypertensive, kit: [Vendor Scale], connectivity: gateway }",
        "events:",
        "  - { at: 2d 09:30, action: broker.restart }",
        '  - { at: 1h, action: gateway.outage, target: "htn[2]", for: 1h }',
      ].join("\n"),
    );
    const missing = join(dir, "missing.yaml");
    const good = join(SCENARIOS, "smoke.yaml");
    const { code, stdout, stderr } = await runCli("scenario", "validate", bad, good, missing);
    expect(code).toBe(2);
    expect(stdout).toBe(`ok ${good}`);
    const lines = stderr.trimEnd().split("\n");
    expect(lines[0]).toBe("rpmlab: E_SCENARIO_INVALID: 3 problem(s) in 2 of 3 file(s):");
    expect(lines.slice(1, 3)).toEqual([
      `${bad}:9:7: events[0].at: "2d 09:30" is after the end of the run (duration 1d)`,
      `${bad}:10:39: events[1].target: "htn[2]" reaches past the last patient of htn (count 2: htn[0-1])`,
    ]);
    expect(lines[3]).toMatch(new RegExp(`^${missing}: \\(root\\): cannot read file: ENOENT`));
  });

  it("needs at least one file", async () => {
    const { code, stderr } = await runCli("scenario", "validate");
    expect(code).toBe(2);
    expect(stderr).toContain("missing required argument");
  });
});
