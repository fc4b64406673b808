import { describe, expect, it } from "vitest";
import {
  escapeXml,
  renderJson,
  renderJsonList,
  renderJunit,
  renderJunitSuites,
  renderText,
  type ScenarioReport,
  scenarioLabels,
} from "../../src/scenario/report.ts";

const TRICKY = `api <GET "/hwi/x/?a=1&b='2'"> ok\nnext line`;

function sample(): ScenarioReport {
  return {
    scenario: "smoke & <drill>",
    file: "scenarios/smoke.yaml",
    seed: 42,
    passed: false,
    digest: "ab".repeat(32),
    counts: {
      readings: {
        duplicates_suppressed: 9,
        taken: 120,
        stored: 110,
        lost_by_design: 6,
        returned_with_unit: 0,
        held_at_end: 0,
        dropped_full: 0,
        missing: 4,
        duplicates_stored: 0,
      },
      webhooks: {
        "MEASUREMENT failed": 3,
        "FULFILLMENT delivered": 12,
        "MEASUREMENT delivered": 107,
      },
    },
    expectations: [
      {
        text: "readings.stored >= 100",
        expected: "readings.stored >= 100",
        source: "expect[0]",
        passed: true,
        actual: 110,
      },
      {
        text: "readings.missing == 0",
        expected: "readings.missing == 0",
        source: "expect[1]",
        passed: false,
        actual: 4,
      },
      {
        text: TRICKY,
        expected: TRICKY,
        source: "expect[2]",
        passed: false,
        actual: "status 404 & <none>",
      },
    ],
    mismatches: ["P-1 Vendor Scale: missing 2026-01-05T08:00:00.000000Z|weight|80.00|0.00|null"],
    virtual: { start: "2026-01-05T00:00:00.000Z", end: "2026-02-04T00:00:00.000Z" },
    wall_ms: 12_345,
    speedup: 209_963.5,
    readings_per_wall_second: 9.72,
    faults: 2,
    dead_letters: {
      count: 7,
      reasons: [
        { reason: "readings.0: E_CODEC_TRUNCATED: blood pressure needs 7 bytes, got 3", count: 5 },
        { reason: "sensor_code: no device type 99", count: 2 },
      ],
    },
  };
}

describe("renderText", () => {
  it("summarises the run, then one line per expectation with ✓/✗ and the actual value", () => {
    const text = renderText(sample());
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toBe("scenario smoke & <drill> (scenarios/smoke.yaml) seed 42: FAILED");
    expect(text).toContain("virtual 2026-01-05T00:00:00.000Z → 2026-02-04T00:00:00.000Z");
    expect(text).toContain("wall 12.35 s, speedup 209964×, 9.72 readings per wall second");
    expect(text).toContain(
      "readings taken 120, stored 110, lost_by_design 6, returned_with_unit 0, held_at_end 0, dropped_full 0, missing 4, duplicates_stored 0, duplicates_suppressed 9",
    );
    expect(text).toContain(
      "webhooks FULFILLMENT delivered 12, MEASUREMENT delivered 107, MEASUREMENT failed 3",
    );
    expect(text).toContain(`digest ${"ab".repeat(32)}`);
    expect(text).toContain("expectations 1/3 held");
    expect(lines).toContain("  ✓ readings.stored >= 100 (actual 110) expect[0]");
    expect(lines).toContain("  ✗ readings.missing == 0 (actual 4) expect[1]");
    // A text of the file's own says what was meant; a failure also says what was checked.
    const worded = renderText({
      ...sample(),
      expectations: [
        {
          text: "nothing lost",
          expected: "readings.missing == 0",
          source: "expect[0]",
          passed: false,
          actual: 4,
        },
      ],
    });
    expect(worded).toContain(
      "  ✗ nothing lost (expected readings.missing == 0, actual 4) expect[0]",
    );
    expect(lines.slice(-3)).toEqual([
      "dead letters 7, most frequent reasons:",
      "  5 × readings.0: E_CODEC_TRUNCATED: blood pressure needs 7 bytes, got 3",
      "  2 × sensor_code: no device type 99",
    ]);
  });

  it("shows control characters of an expectation's text as escapes, never raw", () => {
    const report = sample();
    const [first, ...rest] = report.expectations;
    const text = renderText({
      ...report,
      expectations: [{ ...first!, text: "stored\u0001\u001b[2Jall\nof it" }, ...rest],
    });
    expect(text).toContain("  ✓ stored\\u0001\\u001b[2Jall\\u000aof it (actual 110) expect[0]");
    expect(text.includes("\u0001") || text.includes("\u001b")).toBe(false);
  });

  it("says PASSED and 'none' when there is nothing to count", () => {
    const report = {
      ...sample(),
      passed: true,
      expectations: [],
      mismatches: [],
      dead_letters: { count: 0, reasons: [] },
    };
    report.counts = { ...report.counts, webhooks: {} };
    const text = renderText(report);
    expect(text).toContain(": PASSED");
    expect(text).toContain("webhooks none");
    expect(text).toContain("expectations 0/0 held");
    expect(text).not.toContain("dead letters");
  });

  it("gives a run slower than real time its real speed-up, not 0×", () => {
    const text = renderText({ ...sample(), speedup: 0.5, readings_per_wall_second: 0.0417 });
    expect(text).toContain("speedup 0.5×, 0.0417 readings per wall second");
  });
});

describe("renderJson", () => {
  it("round-trips, with a stable key order and a 2-space indent", () => {
    const report = sample();
    const json = renderJson(report);
    const parsed = JSON.parse(json);
    expect(parsed).toEqual(report);
    expect(Object.keys(parsed)).toEqual([
      "scenario",
      "file",
      "seed",
      "passed",
      "digest",
      "counts",
      "expectations",
      "virtual",
      "wall_ms",
      "speedup",
      "readings_per_wall_second",
      "faults",
      "mismatches",
      "dead_letters",
    ]);
    expect(Object.keys(parsed.counts.readings)).toEqual([
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
    expect(Object.keys(parsed.counts.webhooks)).toEqual([
      "FULFILLMENT delivered",
      "MEASUREMENT delivered",
      "MEASUREMENT failed",
    ]);
    expect(Object.keys(parsed.expectations[0])).toEqual([
      "text",
      "expected",
      "source",
      "passed",
      "actual",
    ]);
    expect(json).toMatch(/^\{\n {2}"scenario": /);
    expect(json.endsWith("}\n")).toBe(true);
  });

  it("is the same text whatever order the report's objects were built in", () => {
    const a = sample();
    const b = { ...sample(), faults: 2 };
    b.counts = {
      webhooks: Object.fromEntries(Object.entries(a.counts.webhooks).reverse()),
      readings: a.counts.readings,
    };
    expect(renderJson(b)).toBe(renderJson(a));
  });
});

/** Reads back what renderJunit wrote: enough of XML for attributes, elements and entities. */
function fromXml(text: string): string {
  return text.replace(/&(#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e.startsWith("#")) return String.fromCharCode(Number(e.slice(1)));
    return { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }[e] as string;
  });
}

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-z]+)="([^"]*)"/g))
    out[m[1] as string] = fromXml(m[2] as string);
  return out;
}

describe("renderJunit", () => {
  const xml = renderJunit(sample());

  it("is one testsuite with the counts, time and reproduction properties", () => {
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
    const suites = [...xml.matchAll(/<testsuite\b([^>]*)>/g)];
    expect(suites).toHaveLength(1);
    expect(attributes(suites[0]?.[1] as string)).toEqual({
      name: "smoke & <drill>",
      tests: "3",
      failures: "2",
      errors: "0",
      skipped: "0",
      time: "12.345",
    });
    const props = [...xml.matchAll(/<property\b([^>]*)\/>/g)].map((m) =>
      attributes(m[1] as string),
    );
    expect(props).toEqual([
      { name: "file", value: "scenarios/smoke.yaml" },
      { name: "seed", value: "42" },
      { name: "digest", value: "ab".repeat(32) },
      { name: "dead_letters", value: "7" },
      // Where every reading went, so a red CI run says what the ledger found.
      { name: "readings.taken", value: "120" },
      { name: "readings.stored", value: "110" },
      { name: "readings.lost_by_design", value: "6" },
      { name: "readings.returned_with_unit", value: "0" },
      { name: "readings.held_at_end", value: "0" },
      { name: "readings.dropped_full", value: "0" },
      { name: "readings.missing", value: "4" },
      { name: "readings.duplicates_stored", value: "0" },
      { name: "readings.duplicates_suppressed", value: "9" },
    ]);
    expect(xml.trimEnd().endsWith("</testsuite>")).toBe(true);
  });

  it("has one testcase per expectation and a failure for each that did not hold", () => {
    const cases = [...xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)];
    expect(cases.map((c) => attributes(c[1] as string).name)).toEqual([
      "readings.stored >= 100",
      "readings.missing == 0",
      TRICKY,
    ]);
    expect(cases[0]?.[2]).toBe("/>");
    const failure = /<failure\b([^>]*)>([^<]*)<\/failure>/.exec(cases[2]?.[3] as string);
    expect(failure).not.toBeNull();
    expect(attributes(failure?.[1] as string)).toEqual({
      message: `expected ${TRICKY}, actual status 404 & <none>`,
      type: "expectation",
    });
    expect(fromXml(failure?.[2] as string)).toBe(
      `expected: ${TRICKY}\nactual: status 404 & <none>\nat: scenarios/smoke.yaml expect[2]`,
    );
  });

  it("names a testcase by where it is in the file when another has the same text", () => {
    // Two api.request events at one time refused, and a check written twice.
    const refused = (source: string) => ({
      text: "api.request at 06:00 takes effect",
      expected: "api.request at 06:00 takes effect",
      source,
      passed: false,
      actual: "GET /hwi/x/: 404",
    });
    const twice = renderJunit({
      ...sample(),
      expectations: [refused("events[0]"), refused("events[1]"), ...sample().expectations],
    });
    const names = [...twice.matchAll(/<testcase\b([^>]*?)\/?>/g)].map(
      (c) => attributes(c[1] as string).name,
    );
    expect(names).toEqual([
      "api.request at 06:00 takes effect (events[0])",
      "api.request at 06:00 takes effect (events[1])",
      "readings.stored >= 100",
      "readings.missing == 0",
      TRICKY,
    ]);
  });

  it("leaves no raw markup characters in text or attributes", () => {
    // Every < starts a tag, every & an entity.
    expect(xml.match(/<(?![?/a-z])/g)).toBeNull();
    expect(xml.match(/&(?!(#\d+|amp|lt|gt|quot|apos);)/g)).toBeNull();
  });
});

describe("escapeXml", () => {
  it("escapes markup, keeps line ends in attributes, and replaces characters XML forbids", () => {
    expect(escapeXml(`a<b>&"c'`, false)).toBe(`a&lt;b&gt;&amp;"c'`);
    expect(escapeXml(`a<b>&"c'\n\t`, true)).toBe("a&lt;b&gt;&amp;&quot;c&apos;&#10;&#9;");
    expect(escapeXml("x\u0000y\u001bz\uD800", false)).toBe("x\uFFFDy\uFFFDz\uFFFD");
    expect(escapeXml("pair \uD83D\uDE00 kept", false)).toBe("pair \uD83D\uDE00 kept");
  });
});

describe("several reports", () => {
  const second: ScenarioReport = {
    ...sample(),
    scenario: "drill",
    passed: true,
    wall_ms: 655,
    expectations: [
      {
        text: "readings.taken > 0",
        expected: "readings.taken > 0",
        source: "expect[0]",
        passed: true,
        actual: 3,
      },
    ],
  };

  it("renderJunitSuites: one document, a testsuites root with totals, one testsuite per run", () => {
    const xml = renderJunitSuites([sample(), second]);
    expect(xml.match(/<\?xml/g)).toHaveLength(1);
    const root = /<testsuites\b([^>]*)>/.exec(xml);
    expect(attributes(root?.[1] as string)).toEqual({
      name: "rpmlab run",
      tests: "4",
      failures: "2",
      errors: "0",
      time: "13.000",
    });
    const suites = [...xml.matchAll(/<testsuite\b([^>]*)>/g)].map((m) =>
      attributes(m[1] as string),
    );
    expect(suites.map((s) => [s.name, s.tests, s.failures])).toEqual([
      ["smoke & <drill>", "3", "2"],
      ["drill", "1", "0"],
    ]);
    expect(xml.match(/<testcase\b/g)).toHaveLength(4);
    expect(xml.trimEnd().endsWith("</testsuites>")).toBe(true);
    // The single-run document holds the same suite.
    const single = renderJunit(second).split("\n").slice(1).join("\n").trimEnd();
    expect(xml).toContain(single.replace(/^/gm, "  "));
  });

  it("renderJunitSuites: two runs of one scenario name are told apart by their files", () => {
    const a = { ...second, file: "envs/a/drill.yaml" };
    const b = { ...second, file: "envs/b/drill.yaml" };
    const xml = renderJunitSuites([a, b, sample()]);
    const suites = [...xml.matchAll(/<testsuite\b([^>]*)>/g)].map(
      (m) => attributes(m[1] as string).name,
    );
    expect(suites).toEqual([
      "drill (envs/a/drill.yaml)",
      "drill (envs/b/drill.yaml)",
      "smoke & <drill>",
    ]);
    const classes = [...xml.matchAll(/<testcase\b([^>]*?)\/?>/g)].map(
      (m) => attributes(m[1] as string).classname,
    );
    expect(classes.slice(0, 2)).toEqual(["drill (envs/a/drill)", "drill (envs/b/drill)"]);
    expect(scenarioLabels([a, b, sample()])).toEqual([...suites]);
  });

  it("renderJunitSuites: a classname Jenkins shows as the scenario, not split at the dots of its file", () => {
    // Jenkins takes a classname's last dot as the package/class boundary: "drill
    // (envs/a/drill.yaml)" showed as package "drill (envs/a/drill", class "yaml)".
    const jenkins = (classname: string) => {
      const dot = classname.lastIndexOf(".");
      return dot < 0
        ? { package: "(root)", class: classname }
        : { package: classname.slice(0, dot), class: classname.slice(dot + 1) };
    };
    const a = { ...second, file: "./envs/v1.2/drill.yaml" };
    const b = { ...second, file: "envs/b/drill.yml" };
    const xml = renderJunitSuites([a, b]);
    const cases = [...xml.matchAll(/<testcase\b([^>]*?)\/?>/g)].map((m) =>
      attributes(m[1] as string),
    );
    expect(cases.map((c) => jenkins(c.classname as string))).toEqual([
      { package: "(root)", class: "drill (envs/v1_2/drill)" },
      { package: "(root)", class: "drill (envs/b/drill)" },
    ]);
    // The expectation is the test's name, dots and all: Jenkins splits a name only without classname.
    expect(cases.map((c) => c.name)).toEqual(["readings.taken > 0", "readings.taken > 0"]);
  });

  it("renderJunitSuites: one file given twice gives two suites of their own, numbered in order", () => {
    // `rpmlab run scenarios/*.yaml scenarios/smoke.yaml`: CI servers key a suite by its name, so
    // two suites named alike showed as one (or one run's failures under the other's name).
    const a = { ...second, file: "envs/a/drill.yaml" };
    const b = { ...second, file: "envs/b/drill.yaml" };
    const names = (reports: ScenarioReport[]) =>
      [...renderJunitSuites(reports).matchAll(/<testsuite\b([^>]*)>/g)].map(
        (m) => attributes(m[1] as string).name,
      );
    const expected = [
      "drill (envs/a/drill.yaml, run 1)",
      "drill (envs/b/drill.yaml)",
      "smoke & <drill>",
      "drill (envs/a/drill.yaml, run 2)",
    ];
    expect(names([a, b, sample(), a])).toEqual(expected);
    expect(scenarioLabels([a, b, sample(), a])).toEqual(expected);
    expect(names([second, second])).toEqual([
      "drill (scenarios/smoke.yaml, run 1)",
      "drill (scenarios/smoke.yaml, run 2)",
    ]);
    // The same again on the next run: the names are the order of the files, nothing else.
    expect(names([a, b, sample(), a])).toEqual(expected);
  });

  it("renderJsonList: an array of the reports as renderJson writes each", () => {
    const list = JSON.parse(renderJsonList([sample(), second]));
    expect(list).toEqual([JSON.parse(renderJson(sample())), JSON.parse(renderJson(second))]);
  });
});
