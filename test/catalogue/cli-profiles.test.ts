import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_PROFILES_DIR } from "../../src/catalogue/catalogue.ts";
import { runCli } from "./cli-io.ts";

describe("rpmlab profiles list", () => {
  it("prints a table: name, sensor code or -, connectivity, stores offline, metrics", async () => {
    const { code, stdout, stderr } = await runCli("profiles", "list");
    expect(code).toBe(0);
    expect(stderr).toBe("");
    const rows = stdout.trimEnd().split("\n");
    expect(rows[0]).toMatch(/^NAME\s+SENSOR CODE\s+CONNECTIVITY\s+STORES OFFLINE\s+METRICS$/);
    expect(rows).toHaveLength(1 + 18);
    const row = (name: string) => rows.find((r) => r.startsWith(`${name}  `))?.split(/\s{2,}/);
    expect(row("Vendor Cellular BPM")).toEqual([
      "Vendor Cellular BPM",
      "-",
      "cellular",
      "yes",
      "blood_pressure, pulse, irregular_heartbeat, battery_percentage",
    ]);
    expect(row("Vendor Peak Flow Meter")).toEqual([
      "Vendor Peak Flow Meter",
      "17",
      "gateway",
      "no",
      "peak_expiratory_flow, forced_expiratory_volume",
    ]);
  });

  it("--json prints the summary of every profile", async () => {
    const { code, stdout } = await runCli("profiles", "list", "--json");
    expect(code).toBe(0);
    const list = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(list).toHaveLength(18);
    const wide = list.find((p) => p.name === "Vendor BPM - Wide Range");
    expect(wide).toEqual({
      name: "Vendor BPM - Wide Range",
      legacy_names: ["Vendor BPM - L"],
      sensor_code: "10",
      connectivity: "gateway",
      stores_offline: true,
      metrics: [
        {
          name: "blood_pressure",
          vital: true,
          value_1: { meaning: "systolic", units: "mmHg" },
          value_2: { meaning: "diastolic", units: "mmHg" },
        },
        {
          name: "pulse",
          vital: true,
          value_1: { meaning: "pulse rate", units: "beats per minute" },
          value_2: null,
        },
        {
          name: "irregular_heartbeat",
          vital: true,
          value_1: { meaning: "irregular heartbeat detected", units: "flag" },
          value_2: null,
        },
        {
          name: "battery_percentage",
          vital: false,
          value_1: { meaning: "battery level", units: "%" },
          value_2: null,
        },
      ],
    });
    const cellular = list.filter((p) => p.connectivity === "cellular");
    expect(cellular.map((p) => p.sensor_code)).toEqual([null, null, null, null]);
    expect(list.every((p) => p.sensor_code === null || typeof p.sensor_code === "string")).toBe(
      true,
    );
  });
});

describe("rpmlab profiles show", () => {
  it("prints a profile by its current name", async () => {
    const { code, stdout } = await runCli("profiles", "show", "Vendor Glucometer");
    expect(code).toBe(0);
    expect(stdout.split("\n")[0]).toBe("Vendor Glucometer");
    expect(stdout).toMatch(/sensor code\s+12/);
    expect(stdout).toMatch(
      /glucose\s+yes\s+vital\s+always\s+blood glucose concentration \(mg\/dL\) 20\.\.600 step 1/,
    );
    expect(stdout).toMatch(/alert\s+sensor_result_above_range \(only when applicable\)/);
    expect(stdout).toContain("GATT (service 1808, mapping glucose)");
    expect(stdout).not.toContain("legacy name,");
  });

  it("resolves the legacy name Vendor BPM - L and says so (spec 2.4)", async () => {
    const { code, stdout } = await runCli("profiles", "show", "Vendor BPM - L");
    expect(code).toBe(0);
    const [title, note] = stdout.split("\n");
    expect(title).toBe("Vendor BPM - Wide Range");
    expect(note).toBe(
      '"Vendor BPM - L" is a legacy name, mapped to "Vendor BPM - Wide Range" (spec 2.4)',
    );
    expect(stdout).toMatch(/cuff\s+22 to 45 cm/);
  });

  it("--json prints the resolved profile, with the legacy note on stderr", async () => {
    const { code, stdout, stderr } = await runCli("profiles", "show", "Vendor BPM - L", "--json");
    expect(code).toBe(0);
    const profile = JSON.parse(stdout);
    expect(profile.name).toBe("Vendor BPM - Wide Range");
    expect(profile.cuff_cm).toEqual([22, 45]);
    expect(profile.gatt.mapping).toBe("blood_pressure");
    expect(stderr).toContain('"Vendor BPM - L" is a legacy name');
  });

  it("fails on an unknown name with E_PROFILE_NOT_FOUND on stderr and exit code 1", async () => {
    const { code, stdout, stderr } = await runCli("profiles", "show", "Vendor BPM - M");
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^rpmlab: E_PROFILE_NOT_FOUND: unknown device "Vendor BPM - M"; known: /,
    );
    expect(stderr).toContain("Vendor BPM - Wide Range");
  });

  it("fails with a usage error (exit 2) when the name is missing", async () => {
    const { code, stderr } = await runCli("profiles", "show");
    expect(code).toBe(2);
    expect(stderr).toContain("missing required argument 'name'");
  });
});

describe("rpmlab profiles validate", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-validate-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("says how many shipped profiles are valid", async () => {
    const { code, stdout } = await runCli("profiles", "validate");
    expect(code).toBe(0);
    expect(stdout).toBe("18 profiles valid");
  });

  it("validates a folder given as argument, and list and show read it with --dir", async () => {
    cpSync(join(DEFAULT_PROFILES_DIR, "vendor-scale.yaml"), join(dir, "vendor-scale.yaml"));
    expect((await runCli("profiles", "validate", dir)).stdout).toBe("1 profile valid");
    const list = JSON.parse((await runCli("profiles", "list", "--json", "--dir", dir)).stdout);
    expect(list.map((p: { name: string }) => p.name)).toEqual(["Vendor Scale"]);
    expect((await runCli("profiles", "show", "Vendor Pulse Ox", "--dir", dir)).code).toBe(1);
  });

  it("prints every issue as file: path: message and exits 1", async () => {
    cpSync(DEFAULT_PROFILES_DIR, dir, { recursive: true });
    writeFileSync(join(dir, "vendor-broken.yaml"), "name: [Vendor Broken\n");
    const scale = join(dir, "vendor-scale.yaml");
    writeFileSync(
      scale,
      readFileSync(scale, "utf8")
        .replace('sensor_code: "34"', "sensor_code: null")
        .replace("units: pounds", "unit: pounds"),
    );
    const { code, stdout, stderr } = await runCli("profiles", "validate", dir);
    // Input that is not valid: nothing ran, as for a scenario file (README "Commands").
    expect(code).toBe(2);
    expect(stdout).toBe("");
    const lines = stderr.trimEnd().split("\n");
    expect(lines[0]).toBe(`rpmlab: E_PROFILE_INVALID: 4 problem(s) in ${dir}:`);
    expect(lines.slice(1).sort()).toEqual([
      // One line per issue: the parser's code frame is left out, its location kept.
      expect.stringMatching(
        /vendor-broken\.yaml: \(root\): not valid YAML: .+ at line 2, column 1$/,
      ),
      `${scale}: metrics[0].value_1.units: Invalid input: expected string, received undefined`,
      `${scale}: metrics[0].value_1: Unrecognized key: "unit"`,
      `${scale}: sensor_code: direct-cellular devices have no sensor code; gateway devices must have one`,
    ]);
  });
});

describe("--help", () => {
  it.each([
    [["profiles"], "Usage: rpmlab profiles [options] [command]"],
    [["profiles", "list"], "Usage: rpmlab profiles list [options]"],
    [["profiles", "show"], "Usage: rpmlab profiles show [options] <name>"],
    [["profiles", "validate"], "Usage: rpmlab profiles validate [options] [dir]"],
  ])("rpmlab %s --help", async (args, usage) => {
    const { code, stdout } = await runCli(...args, "--help");
    expect(code).toBe(0);
    expect(stdout).toContain(usage);
  });
});
