import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseIso } from "../../src/core/time.ts";
import { defaultLibrary, loadScenario } from "../../src/scenario/load.ts";

const DIR = fileURLToPath(new URL("../../scenarios", import.meta.url));
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith(".yaml"))
  .sort();
/** `rpmlab demo`'s cohort: a week in the file, a year (until Ctrl-C) in `rpmlab demo`. */
const DEMO = "demo.yaml";
const CI_FILES = FILES.filter((f) => f !== DEMO);
const library = defaultLibrary();
const DAY = 86_400_000;

describe("shipped scenarios (scenarios/*.yaml)", () => {
  it("are the nine of issue 7 §4, and the demo's", () => {
    expect(FILES).toContain(DEMO);
    expect(CI_FILES.map((f) => basename(f, ".yaml"))).toEqual([
      "broker-chaos",
      "cellular-outage",
      "chf-weight-alerts",
      "diabetes-supplies",
      "gateway-replacement",
      "hypertension-cohort-30d",
      "onboarding",
      "smoke",
      "webhook-endpoint-down",
    ]);
  });

  describe.each(FILES)("%s", (name) => {
    const file = join(DIR, name);
    const text = readFileSync(file, "utf8");

    it("loads, with every rule across fields met", () => {
      const scenario = loadScenario(file, library);
      expect(scenario.name).toBe(basename(name, ".yaml"));
      expect(scenario.expectations.length).toBeGreaterThan(0);
    });

    it("names the JSON Schema on its first line, then says what it demonstrates", () => {
      const lines = text.split("\n");
      expect(lines[0]).toBe("# yaml-language-server: $schema=./rpmlab-scenario.schema.json");
      const end = lines.findIndex((line, i) => i > 0 && !line.startsWith("#"));
      const header = lines.slice(1, end);
      expect(header.join(" ")).toContain(`# ${basename(name, ".yaml")}: `);
      expect(header.join(" ").length).toBeGreaterThan(200);
    });

    // demo.yaml too: `rpmlab run scenarios/*.yaml` takes it with the others.
    it("stays small enough for CI: at full speed, at most 30 days, cohorts of at most 50", () => {
      const scenario = loadScenario(file, library);
      expect(scenario.clock.speed).toBe("max");
      expect(scenario.durationMs).toBeLessThanOrEqual(30 * DAY);
      for (const cohort of scenario.cohorts) expect(cohort.count).toBeLessThanOrEqual(50);
    });
  });

  it("smoke uses every device type of the catalogue exactly once", () => {
    const smoke = loadScenario(join(DIR, "smoke.yaml"), library);
    const used = smoke.cohorts.flatMap((c) => c.kit.map((device) => ({ device, count: c.count })));
    expect(used.map((u) => u.device).sort()).toEqual(
      library.catalogue.profiles.map((p) => p.name).sort(),
    );
    expect(used.every((u) => u.count === 1)).toBe(true);
  });

  it("parses events to ms offsets, sorted, with resolved selectors", () => {
    const scenario = loadScenario(join(DIR, "chf-weight-alerts.yaml"), library);
    expect(scenario.clock).toEqual({ startMs: parseIso("2026-03-02T00:00:00Z"), speed: "max" });
    expect(scenario.durationMs).toBe(14 * DAY);
    expect(scenario.transports).toEqual({ ble: "direct", broker: "embedded", store: "memory" });
    expect(scenario.events).toEqual([
      {
        action: "device.clock_drift",
        target: { cohort: "chf", from: 5, to: 5 },
        device: "Vendor Scale",
        driftMs: 7 * 60_000,
        atMs: DAY + 12 * 3_600_000,
        at: "1d 12:00",
        source: "events[1]",
      },
      {
        action: "device.out_of_range",
        target: { cohort: "chf", from: 0, to: 4 },
        device: "Vendor Scale",
        forMs: 2 * DAY,
        atMs: 3 * DAY + 6 * 3_600_000,
        at: "3d 06:00",
        source: "events[0]",
      },
      {
        action: "device.duplicate_burst",
        target: { cohort: "chf", from: 6, to: 8 },
        device: "Vendor Scale",
        count: 3,
        atMs: 9 * DAY + 7 * 3_600_000,
        at: "9d 07:00",
        source: "events[2]",
      },
    ]);
    expect(scenario.accounts[0]!.webhooks[0]).toEqual({
      id: "alerts",
      account: "hf-clinic",
      events: ["MEASUREMENT"],
      url: "lab",
      postAsArray: false,
      enabledByDefault: true,
      auth: { header: "X-Api-Key", key: "hf-alerts-4f1c" },
      sign: true,
    });
    expect(scenario.expectations[3]).toEqual({
      kind: "readings",
      counter: "duplicates_suppressed",
      cmp: { op: ">=", value: 1 },
      text: "the re-sent weights are recognised and dropped",
      source: "expect[1]",
    });
  });
});

describe("the demo's cohort (scenarios/demo.yaml)", () => {
  const demo = loadScenario(join(DIR, DEMO), library);

  it("is a dozen patients of one clinic whose webhook the lab hosts, a week long", () => {
    expect(demo.cohorts.reduce((n, c) => n + c.count, 0)).toBe(12);
    expect(demo.durationMs).toBe(7 * DAY);
    expect(demo.accounts.map((a) => a.webhooks.map((w) => [w.url, [...w.events].sort()]))).toEqual([
      [["lab", ["FULFILLMENT", "MEASUREMENT", "PATIENT", "SPECIAL_ORDER"]]],
    ]);
  });

  it("has the ASR module with automatic strip reorder for its glucometers", () => {
    expect(demo.accounts[0]!.asr).toEqual({ autoReorder: { strips_below: 20 } });
    expect(demo.cohorts.some((c) => c.kit.some((k) => /Glucometer/.test(k)))).toBe(true);
  });

  it("has ordered kits (fulfilment webhooks) and active ones, and mild faults", () => {
    expect(new Set(demo.cohorts.map((c) => c.onboarding))).toEqual(new Set(["active", "ordered"]));
    expect(new Set(demo.cohorts.map((c) => c.connectivity))).toEqual(
      new Set(["gateway", "cellular"]),
    );
    expect(demo.events.map((e) => e.action)).toContain("gateway.outage");
    expect(demo.events.every((e) => e.atMs < 7 * DAY)).toBe(true);
  });
});
