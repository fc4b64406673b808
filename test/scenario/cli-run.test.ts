import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../catalogue/cli-io.ts";

const SMOKE = fileURLToPath(new URL("../../scenarios/smoke.yaml", import.meta.url));
const FAILS = fileURLToPath(new URL("../fixtures/scenarios/fails.yaml", import.meta.url));

/** `rpmlab run` through the in-process CLI entry: exit codes, the text report, the CI reports. */
describe("rpmlab run", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-run-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs smoke, exits 0 and writes the JSON and JUnit reports of the same run", async () => {
    const jsonFile = join(dir, "smoke.json");
    const json = await runCli("run", SMOKE, "--report", "json", jsonFile, "--no-progress");
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    expect(json.stdout).toMatch(/^scenario smoke \(.*smoke\.yaml\) seed 42: PASSED\n/);
    const report = JSON.parse(readFileSync(jsonFile, "utf8")) as {
      scenario: string;
      seed: number;
      digest: string;
      passed: boolean;
      counts: { readings: Record<string, number>; webhooks: Record<string, number> };
      expectations: { text: string; passed: boolean; actual: number | string }[];
    };
    expect(report.scenario).toBe("smoke");
    expect(report.seed).toBe(42);
    expect(report.passed).toBe(true);
    expect(report.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(json.stdout).toContain(`digest ${report.digest}\n`);
    expect(Object.keys(report.counts.readings)).toEqual([
      "taken",
      "stored",
      "lost_by_design",
      "returned_with_unit",
      "held_at_end",
      "dropped_full",
      "missing",
      "duplicates_stored",
      "duplicates_suppressed",
    ]);
    expect(report.counts.readings.stored).toBe(report.counts.readings.taken);
    expect(report.counts.webhooks["MEASUREMENT delivered"]).toBeGreaterThanOrEqual(20);
    expect(report.expectations).toHaveLength(6);
    expect(report.expectations.every((e) => e.passed)).toBe(true);
    // Counters carry a number, API checks what they got.
    expect(report.expectations[0]).toEqual({
      text: "readings.stored >= 20",
      expected: "readings.stored >= 20",
      source: "expect[0]",
      passed: true,
      actual: report.counts.readings.stored,
    });
    expect(report.expectations[5]).toEqual({
      text: "one patient per cohort, created through the HWI API",
      expected: expect.stringMatching(/^api /),
      source: "expect[3]",
      passed: true,
      actual: "status 200, count 7",
    });

    // Both reports of one run: --report repeated.
    const junitFile = join(dir, "smoke.xml");
    const againFile = join(dir, "again.json");
    const junit = await runCli(
      "run",
      SMOKE,
      "--report",
      "junit",
      junitFile,
      "--report",
      "json",
      againFile,
      "--no-progress",
    );
    expect(junit.code).toBe(0);
    expect(JSON.parse(readFileSync(againFile, "utf8")).digest).toBe(report.digest);
    const xml = readFileSync(junitFile, "utf8");
    expect(xml).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuite name="smoke" /);
    expect(xml).toMatch(/ tests="6" failures="0" /);
    const cases = [...xml.matchAll(/<testcase name="([^"]*)" classname="smoke"/g)].map((m) => m[1]);
    expect(cases).toEqual(report.expectations.map((e) => escapeXml(e.text)));
    expect(xml).not.toContain("<failure");
    // Same file, same seed, another run: the same digest.
    expect(xml).toContain(`<property name="digest" value="${report.digest}"/>`);
  }, 60_000);

  it("exits 1 when an expectation does not hold, marking it ✗", async () => {
    const { code, stdout, stderr } = await runCli("run", FAILS, "--no-progress");
    expect(code).toBe(1);
    expect(stdout).toMatch(/^scenario fails \(.*fails\.yaml\) seed 1: FAILED\n/);
    expect(stdout).toMatch(
      /\n {2}✗ more readings than one patient takes in a day \(expected readings\.stored > 100000, actual \d+\) expect\[0\]\n/,
    );
    expect(stdout).toContain("expectations 1/2 held\n");
    expect(stderr).toBe("rpmlab: E_SCENARIO_EXPECTATIONS: expectations did not hold in fails");
  }, 60_000);

  it("exits 3 when a run cannot end (E_SCENARIO_FAILED), naming the scenario, what failed and the unwritten report", async () => {
    // A store that cannot be opened: its directory would be under a regular file.
    const blocker = join(dir, "not-a-directory");
    writeFileSync(blocker, "");
    const scenario = join(dir, "no-store.yaml");
    writeFileSync(
      scenario,
      readFileSync(FAILS, "utf8").replace(
        "scenario: fails\n",
        `scenario: no-store\ntransports: { store: "sqlite:${blocker}/lab.db" }\n`,
      ),
    );
    const reportFile = join(dir, "no-store.xml");
    const { code, stdout, stderr } = await runCli(
      "run",
      scenario,
      "--report",
      "junit",
      reportFile,
      "--no-progress",
    );
    // Told apart from failed expectations (1) and an invalid file (2): CI may retry a lab failure.
    expect(code).toBe(3);
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^rpmlab: E_SCENARIO_FAILED: scenario no-store did not run to its end: E_STORE_UNAVAILABLE: cannot open sqlite:.*not-a-directory\/lab\.db: .*; --report junit .*no-store\.xml not written$/,
    );
    expect(existsSync(reportFile)).toBe(false);
  }, 60_000);

  it("exits 2 listing the problems of every invalid file, before running any", async () => {
    const broken = join(dir, "broken.yaml");
    writeFileSync(broken, "scenario: [");
    const list = join(dir, "list.yaml");
    writeFileSync(list, "- a\n- b\n");
    const { code, stdout, stderr } = await runCli("run", broken, SMOKE, list, "--no-progress");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    const lines = stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^rpmlab: E_SCENARIO_INVALID: \d+ problem\(s\) in 2 of 3 file\(s\):$/);
    // Where the parser stopped, in the form of every other problem (file:line:column).
    expect(lines[1]).toMatch(new RegExp(`^${broken}:1:12: \\(root\\): not valid YAML`));
    expect(lines.slice(2).every((line) => line.startsWith(`${list}: `))).toBe(true);
    expect(lines.length).toBeGreaterThan(2);
  });

  it("exits 2 on transports the runner cannot drive, in any file, before running any", async () => {
    // Valid for the schema, refused by the runner: a real radio cannot follow a virtual clock.
    const radio = join(dir, "radio.yaml");
    writeFileSync(
      radio,
      readFileSync(FAILS, "utf8").replace(
        "scenario: fails\n",
        "scenario: radio\ntransports: { ble: hci:0 }\n",
      ),
    );
    const { code, stdout, stderr } = await runCli("run", FAILS, radio, "--no-progress");
    // Not 3 (a lab that failed, worth a retry): the file asks for what no run can do.
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^rpmlab: E_SCENARIO_INVALID: .*radio\.yaml: transports\.ble hci:0: a scenario runs on a virtual clock/,
    );
  });

  it("exits 2 on a report format it does not write, before running anything", async () => {
    const { code, stdout, stderr } = await runCli("run", SMOKE, "--report", "pdf", "x");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^rpmlab: E_USAGE: --report takes a format and a file/);
  });

  it("exits 2 on a report or capture file it could not write, before running anything", async () => {
    const missing = join(dir, "no-such-dir", "r.xml");
    const report = await runCli("run", SMOKE, "--report", "junit", missing, "--no-progress");
    expect(report.code).toBe(2);
    expect(report.stdout).toBe("");
    expect(report.stderr).toBe(
      `rpmlab: E_USAGE: --report junit ${missing}: its directory ${join(dir, "no-such-dir")} does not exist`,
    );
    const capture = await runCli("run", SMOKE, "--btsnoop", dir, "--no-progress");
    expect(capture.code).toBe(2);
    expect(capture.stderr).toBe(`rpmlab: E_USAGE: --btsnoop ${dir}: is a directory`);
    expect(existsSync(missing)).toBe(false);
  });

  it("exits 2 when both reports name one file (one would overwrite the other), before running", async () => {
    const same = join(dir, "report.out");
    const { code, stdout, stderr } = await runCli(
      "run",
      SMOKE,
      "--report",
      "json",
      same,
      "--report",
      "junit",
      join(dir, ".", "report.out"),
      "--no-progress",
    );
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^rpmlab: E_USAGE: --report junit .*already takes the json report/);
    expect(existsSync(same)).toBe(false);
  });

  it("exits 2 on a report or capture in a scenario file of the run, which stays as it was", async () => {
    // Before, the report overwrote the scenario file at the end of the run.
    const scenario = join(dir, "smoke.yaml");
    const text = readFileSync(SMOKE, "utf8");
    writeFileSync(scenario, text);
    const report = await runCli(
      "run",
      scenario,
      "--report",
      "junit",
      join(dir, "..", basename(dir), "smoke.yaml"),
      "--no-progress",
    );
    expect(report.code).toBe(2);
    expect(report.stdout).toBe("");
    expect(report.stderr).toBe(
      `rpmlab: E_USAGE: --report junit ${join(dir, "..", basename(dir), "smoke.yaml")}: is a scenario file of this run, which it would overwrite`,
    );
    const capture = await runCli("run", scenario, "--btsnoop", scenario, "--no-progress");
    expect(capture.code).toBe(2);
    expect(capture.stderr).toBe(
      `rpmlab: E_USAGE: --btsnoop ${scenario}: is a scenario file of this run, which it would overwrite`,
    );
    const both = join(dir, "run.out");
    const shared = await runCli(
      "run",
      scenario,
      "--btsnoop",
      both,
      "--report",
      "json",
      both,
      "--no-progress",
    );
    expect(shared.code).toBe(2);
    expect(shared.stderr).toBe(
      `rpmlab: E_USAGE: --report json ${both}: the --btsnoop capture takes that file`,
    );
    expect(readFileSync(scenario, "utf8")).toBe(text);
    expect(existsSync(both)).toBe(false);
  });

  it("exits 2 on an empty --seed, as the file's schema refuses one", async () => {
    const { code, stdout, stderr } = await runCli("run", SMOKE, "--seed", "", "--no-progress");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe('rpmlab: E_USAGE: --seed takes an integer or a non-empty string, got ""');
  });

  it("reads --seed as the file reads seed: 1.0 is 1, 16 digits a number, 42.5 and 2^53 refused", async () => {
    /** `rpmlab run FILE [--seed S]`'s JSON report: its seed and digest. */
    const reportOf = async (file: string, ...seed: string[]) => {
      const out = join(dir, `report-${seed.join("")}-${file === FAILS ? "" : "big"}.json`);
      const run = await runCli("run", file, ...seed, "--report", "json", out, "--no-progress");
      expect(run.code, run.stderr).toBe(1); // fails.yaml's expectation never holds
      const { seed: used, digest } = JSON.parse(readFileSync(out, "utf8"));
      return { seed: used as unknown, digest: digest as string };
    };
    const file = await reportOf(FAILS);
    expect(file.seed).toBe(1);
    // "1.0" was the text seed "1.0": another stream than the file's seed: 1.
    expect(await reportOf(FAILS, "--seed", "1.0")).toEqual(file);
    // 16 digits were text on the command line and a number in a file.
    const big = "1234567890123456";
    // A scenario's file is named after it: fails.yaml, in a folder of its own.
    mkdirSync(join(dir, "big"));
    const bigFile = join(dir, "big", "fails.yaml");
    writeFileSync(bigFile, readFileSync(FAILS, "utf8").replace(/^seed: 1$/m, `seed: ${big}`));
    const fromFile = await reportOf(bigFile);
    expect(fromFile.seed).toBe(Number(big));
    expect((await reportOf(FAILS, "--seed", big)).digest).toBe(fromFile.digest);
    // What a file refuses (not whole; past 2^53-1, which YAML would round) is refused here too.
    for (const seed of ["42.5", "12345678901234567"]) {
      const refused = await runCli("run", FAILS, "--seed", seed, "--no-progress");
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toBe(
        `rpmlab: E_USAGE: --seed "${seed}" is a number, and a number seed is a whole number from -9007199254740991 to 9007199254740991, as in a scenario file`,
      );
    }
  }, 60_000);
});

function escapeXml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
