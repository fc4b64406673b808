/**
 * Bad profiles in a temporary folder: loading reports every problem of every file, each with its
 * file and its path inside the file, as a user fixing the files would need.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { DEFAULT_PROFILES_DIR } from "../../src/catalogue/catalogue.ts";
import { type DataIssue, formatIssues, loadYamlDir } from "../../src/catalogue/loader.ts";
import { profileSchema } from "../../src/catalogue/schema.ts";
import { loadProfiles } from "../../src/catalogue/validate.ts";

// biome-ignore lint/suspicious/noExplicitAny: raw YAML data, edited freely into invalid shapes
type Raw = Record<string, any>;

/** The shipped wide-range BPM profile as plain data, a valid starting point for each case. */
const exemplar = (): Raw =>
  parse(readFileSync(join(DEFAULT_PROFILES_DIR, "vendor-bpm-wide-range.yaml"), "utf8"));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rpmlab-profiles-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Writes a variant of the exemplar with its own name and sku, so names stay unique. */
function writeProfile(file: string, edit: (p: Raw) => void = () => {}): void {
  const profile = exemplar();
  profile.name = `Test ${file}`;
  profile.legacy_names = [];
  profile.sku = `SKU-${file}`;
  edit(profile);
  writeFileSync(join(dir, file), stringify(profile));
}

/** Issues as "file: path: message" with the file's base name, sorted. */
function lines(issues: readonly DataIssue[]): string[] {
  return issues.map((i) => `${basename(i.file)}: ${i.path}: ${i.message}`).sort();
}

function issuesOf(result: ReturnType<typeof loadYamlDir>): DataIssue[] {
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.issues;
}

describe("loadYamlDir with the profile schema", () => {
  it("reports every problem of every file, each with file and path", () => {
    writeProfile("vendor-good.yaml");
    writeProfile("vendor-x.yaml", (p) => {
      p.metrics[1].value_1.units = 42;
    });
    writeProfile("vendor-unknown-param.yaml", (p) => {
      p.metrics[0].filter_params = ["measurement_index", "colour"];
    });
    writeProfile("vendor-bad-code.yaml", (p) => {
      p.sensor_code = "1O";
    });
    writeProfile("vendor-cellular-with-code.yaml", (p) => {
      Object.assign(p, { connectivity: "cellular", identity: "imei", per_gateway: "none" });
    });
    writeFileSync(join(dir, "vendor-broken.yaml"), "name: [Vendor Broken\nsku: X\n");

    const issues = issuesOf(loadYamlDir(dir, profileSchema));
    const found = lines(issues);
    const expected: Array<[string, RegExp]> = [
      ["vendor-x.yaml: metrics[1].value_1.units: ", /expected string, received number/],
      [
        "vendor-unknown-param.yaml: metrics[0].filter_params[1]: ",
        /filter param "colour" is not defined/,
      ],
      ["vendor-bad-code.yaml: sensor_code: ", /decimal string/],
      [
        "vendor-cellular-with-code.yaml: sensor_code: ",
        /direct-cellular devices have no sensor code/,
      ],
      ["vendor-broken.yaml: (root): ", /not valid YAML/],
    ];
    for (const [prefix, message] of expected) {
      const line = found.find((l) => l.startsWith(prefix));
      expect(line, `an issue starting "${prefix}" among:\n${found.join("\n")}`).toMatch(message);
    }
    // Nothing more, and nothing about the valid file.
    expect(found).toHaveLength(expected.length);
    expect(found.some((l) => l.startsWith("vendor-good.yaml"))).toBe(false);
    // The formatted listing a user sees carries the full file path.
    expect(formatIssues(issues)).toContain(
      `${join(dir, "vendor-x.yaml")}: metrics[1].value_1.units: `,
    );
  });

  it("reports shape errors and cross-field errors of one file together", () => {
    writeProfile("vendor-two.yaml", (p) => {
      p.metrics[1].value_1.units = 42;
      p.metrics[0].filter_params = ["measurement_index", "colour"];
      p.connectivity = "cellular";
    });
    const found = lines(issuesOf(loadYamlDir(dir, profileSchema)));
    expect(found.map((l) => l.split(": ").slice(0, 2).join(": "))).toEqual([
      "vendor-two.yaml: identity",
      "vendor-two.yaml: metrics[0].filter_params[1]",
      "vendor-two.yaml: metrics[1].value_1.units",
      "vendor-two.yaml: per_gateway",
      "vendor-two.yaml: sensor_code",
    ]);
  });

  it.each<[string, (p: Raw) => void, string, RegExp]>([
    ["a misspelt key", (p) => (p.metircs = p.metrics), "(root)", /Unrecognized key: "metircs"/],
    [
      "a range with min above max",
      (p) => (p.metrics[0].value_1.min = 300),
      "metrics[0].value_1.max",
      /max is below min \(300\)/,
    ],
    [
      "a bound off the step grid",
      (p) => (p.metrics[3].value_1.max = 99.5),
      "metrics[3].value_1.max",
      /99.5 is not a multiple of step 1/,
    ],
    [
      "a pattern that is not a regular expression",
      (p) => {
        p.metrics[0].filter_params.push("serial_number");
        p.filter_params.push({ key: "serial_number", kind: "pattern", pattern: "^[A-Z$" });
      },
      "filter_params[1].pattern",
      /not a valid regular expression/,
    ],
    [
      "an unknown filter param kind",
      (p) => (p.filter_params[0].kind = "integer"),
      "filter_params[0].kind",
      /./,
    ],
    [
      "flags for a metric that does not carry them",
      (p) => {
        p.metrics[0].filter_params.push("flags");
        p.filter_params.push({
          key: "flags",
          kind: "flags",
          by_metric: { blood_pressure: { cuff_ok: "bit" }, spO2: { valid: "bit" } },
        });
      },
      "filter_params[1].by_metric.spO2",
      /no metric spO2 carries "flags"/,
    ],
    [
      "a filter param no metric carries",
      (p) => p.filter_params.push({ key: "device_log_index", kind: "positive_integer" }),
      "filter_params[1].key",
      /defined but no metric carries it/,
    ],
    [
      "a vital flag that contradicts the category",
      (p) => (p.metrics[3].vital = true),
      "metrics[3].category",
      /category is vital exactly when the metric is vital/,
    ],
    [
      "a cuff on a device that is not a BPM",
      (p) => (p.family = "scale"),
      "cuff_cm",
      /only blood pressure monitors have a cuff size/,
    ],
    [
      "a required sensor id on a one-per-gateway device",
      (p) => (p.sensor_id = { required: true, pattern: "^[A-Z0-9]{6,8}$" }),
      "sensor_id.required",
      /many_by_sensor_id/,
    ],
    [
      "an unanchored sensor id pattern",
      (p) => (p.sensor_id = { required: false, pattern: "[A-Z0-9]{6,8}" }),
      "sensor_id.pattern",
      /anchored/,
    ],
    [
      "a GATT UUID in lower case 16-bit form",
      (p) => (p.gatt.characteristics[0].uuid = "2a35"),
      "gatt.characteristics[0].uuid",
      /16-bit UUID/,
    ],
  ])("reports %s", (_what, edit, path, message) => {
    writeProfile("vendor-case.yaml", edit);
    const issues = issuesOf(loadYamlDir(dir, profileSchema));
    const here = issues.filter((i) => i.path === path);
    expect(here.length, `an issue at ${path} among:\n${formatIssues(issues)}`).toBeGreaterThan(0);
    expect(here.map((i) => i.message).join("\n")).toMatch(message);
    expect(issues.every((i) => basename(i.file) === "vendor-case.yaml")).toBe(true);
  });

  it("reports a Current Time without Read or Notify, which CTS 1.1 §3.1 makes mandatory", () => {
    writeProfile("vendor-time.yaml", (p) => {
      const time = p.gatt.characteristics.find((c: Raw) => c.uuid === "2A2B");
      time.properties = ["read", "write"];
    });
    const found = lines(issuesOf(loadYamlDir(dir, profileSchema)));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /^vendor-time\.yaml: gatt\.characteristics\[\d+\]\.properties: Current Time \(2A2B\) must have read and notify \(CTS 1\.1 §3\.1\); it lacks notify$/,
    );
  });

  it("reports a sensor code over 255, which the scan response carries in one octet", () => {
    // "300" was advertised as 44 (300 mod 256): a gateway whitelisting 300 never found the
    // device, and one whitelisting 44 (the proximity band's code) took it.
    writeProfile("vendor-wide-code.yaml", (p) => {
      p.sensor_code = "300";
    });
    writeProfile("vendor-top-code.yaml", (p) => {
      p.sensor_code = "255";
    });
    expect(lines(issuesOf(loadYamlDir(dir, profileSchema)))).toEqual([
      "vendor-wide-code.yaml: sensor_code: sensor code 300 is over 255: the scan response carries it in one octet",
    ]);
  });

  it("reports a missing field once, not again as a contradiction with other fields", () => {
    writeProfile("vendor-missing.yaml", (p) => {
      delete p.family;
      delete p.sensor_code;
      delete p.per_gateway;
      p.connectivity = "cellular";
      p.identity = "imei";
    });
    const found = lines(issuesOf(loadYamlDir(dir, profileSchema)));
    expect(found.map((l) => l.split(": ")[1])).toEqual(["family", "per_gateway", "sensor_code"]);
  });

  it("reports an empty or missing folder", () => {
    expect(lines(issuesOf(loadYamlDir(dir, profileSchema)))).toEqual([
      `${basename(dir)}: (root): no .yaml files`,
    ]);
    const missing = join(dir, "nowhere");
    expect(issuesOf(loadYamlDir(missing, profileSchema))[0]?.message).toMatch(/cannot read folder/);
  });
});

describe("loadProfiles: rules across files", () => {
  it("reports a device name or sku used twice, and a legacy name that is another's name", () => {
    writeProfile("vendor-a.yaml", (p) => {
      p.name = "Vendor Thing";
      p.legacy_names = ["Vendor Old Thing"];
    });
    writeProfile("vendor-b.yaml", (p) => {
      p.name = "Vendor Thing";
      p.sku = "SKU-vendor-a.yaml";
    });
    writeProfile("vendor-c.yaml", (p) => {
      p.legacy_names = ["Vendor Thing"];
    });
    writeProfile("vendor-d.yaml", (p) => {
      p.sensor_code = 10; // a schema error in another file does not hide the rules across files
    });
    const result = loadProfiles(dir);
    expect(result.ok).toBe(false);
    const found = lines(result.ok ? [] : result.issues);
    const a = join(dir, "vendor-a.yaml");
    expect(found).toEqual([
      `vendor-b.yaml: name: device name "Vendor Thing" is already used in ${a}`,
      `vendor-b.yaml: sku: sku "SKU-vendor-a.yaml" is already used in ${a}`,
      `vendor-c.yaml: legacy_names[0]: device name "Vendor Thing" is already used in ${a}`,
      expect.stringMatching(/^vendor-d\.yaml: sensor_code: .*expected string/),
    ]);
  });

  it("reports a sensor code shared by two families, or by types with other metrics", () => {
    writeProfile("vendor-a.yaml");
    writeProfile("vendor-b.yaml", (p) => {
      p.family = "scale";
      delete p.cuff_cm;
    });
    writeProfile("vendor-c.yaml", (p) => {
      (p.metrics as { display_name: string }[])[0]!.display_name = "Something Else";
    });
    const result = loadProfiles(dir);
    const a = join(dir, "vendor-a.yaml");
    const code = exemplar().sensor_code;
    expect(lines(result.ok ? [] : result.issues)).toEqual([
      `vendor-b.yaml: sensor_code: sensor code "${code}" is used in ${a} by family ${exemplar().family}; a sensor code is one family`,
      `vendor-c.yaml: metrics: sensor code "${code}" is used in ${a} with other metrics; the types of one sensor code report the same metrics`,
    ]);
  });
});
