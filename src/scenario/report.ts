import { printable } from "../core/printable.ts";
import type { ExpectationResult } from "./evaluate.ts";
import { READING_COUNTERS } from "./expectations.ts";
import type { ReadingCounts } from "./observed.ts";

/** What `rpmlab run` reports about one scenario, rendered as text, JSON or JUnit XML. */
export interface ScenarioReport {
  scenario: string;
  file: string;
  seed: string | number;
  /** Every expectation held. */
  passed: boolean;
  /** scenarioDigest of the run. */
  digest: string;
  counts: {
    readings: ReadingCounts;
    /** Deliveries by event and state, keyed "MEASUREMENT delivered". */
    webhooks: Record<string, number>;
  };
  expectations: readonly ExpectationResult[];
  /** ISO date-times of the virtual clock at start and end. */
  virtual: { start: string; end: string };
  wall_ms: number;
  /** Virtual ms per wall ms (rounded by `rate`). */
  speedup: number;
  /** Rounded by `rate`. */
  readings_per_wall_second: number;
  /** Fault actions that ran. */
  faults: number;
  /** A few records the ledger missed or did not expect (device by device), empty when none. */
  mismatches: readonly string[];
  dead_letters: DeadLetterCounts;
}

/** Messages ingestion kept as dead letters in the run, and the most frequent reasons. */
export interface DeadLetterCounts {
  count: number;
  reasons: readonly { reason: string; count: number }[];
}

/** The readings counters in the order scenario files list them (expectations.ts). */
const READING_KEYS: readonly (keyof ReadingCounts)[] = READING_COUNTERS;

/** A readable summary, then one line per expectation: ✓ or ✗, its text, the actual value. */
export function renderText(report: ScenarioReport): string {
  const held = report.expectations.filter((e) => e.passed).length;
  const r = report.counts.readings;
  const webhooks = sortedEntries(report.counts.webhooks);
  const lines = [
    `scenario ${report.scenario} (${report.file}) seed ${report.seed}: ${report.passed ? "PASSED" : "FAILED"}`,
    `virtual ${report.virtual.start} → ${report.virtual.end}`,
    `wall ${formatNumber(report.wall_ms / 1000, 2)} s, speedup ${rate(report.speedup)}×, ${rate(report.readings_per_wall_second)} readings per wall second`,
    `readings ${READING_KEYS.map((k) => `${k} ${r[k]}`).join(", ")}`,
    `webhooks ${webhooks.length === 0 ? "none" : webhooks.map(([k, n]) => `${k} ${n}`).join(", ")}`,
    `faults ${report.faults}`,
    `digest ${report.digest}`,
    `expectations ${held}/${report.expectations.length} held`,
    // printable(): a scenario's own text (or an answer quoted in actual) printed raw could move
    // the terminal's cursor or end the line.
    ...report.expectations.map(
      (e) =>
        `  ${e.passed ? "✓" : "✗"} ${printable(e.text)} (${e.passed || e.text.endsWith(e.expected) ? "" : `expected ${printable(e.expected)}, `}actual ${printable(String(e.actual))}) ${e.source}`,
    ),
    ...(report.mismatches.length === 0
      ? []
      : ["ledger mismatches (first few):", ...report.mismatches.map((m) => `  ${m}`)]),
    ...(report.dead_letters.count === 0
      ? []
      : [
          `dead letters ${report.dead_letters.count}, most frequent reasons:`,
          ...report.dead_letters.reasons.map((r) => `  ${r.count} × ${r.reason}`),
        ]),
  ];
  return `${lines.join("\n")}\n`;
}

/** The report as JSON: keys in the order of ScenarioReport, webhook counts sorted, 2-space indent. */
export function renderJson(report: ScenarioReport): string {
  return `${JSON.stringify(orderedReport(report), null, 2)}\n`;
}

/**
 * The report as one line of JSON, keys as renderJson's: what `rpmlab demo --json` prints after
 * its details line, so its stdout stays JSON lines to the end.
 */
export function renderJsonLine(report: ScenarioReport): string {
  return `${JSON.stringify(orderedReport(report))}\n`;
}

/** A copy of the report whose keys are in a fixed order, whatever order it was built in. */
function orderedReport(report: ScenarioReport): ScenarioReport {
  const r = report.counts.readings;
  return {
    scenario: report.scenario,
    file: report.file,
    seed: report.seed,
    passed: report.passed,
    digest: report.digest,
    counts: {
      readings: {
        taken: r.taken,
        stored: r.stored,
        lost_by_design: r.lost_by_design,
        returned_with_unit: r.returned_with_unit,
        held_at_end: r.held_at_end,
        dropped_full: r.dropped_full,
        missing: r.missing,
        duplicates_stored: r.duplicates_stored,
        duplicates_suppressed: r.duplicates_suppressed,
      },
      webhooks: Object.fromEntries(sortedEntries(report.counts.webhooks)),
    },
    expectations: report.expectations.map((e) => ({
      text: e.text,
      expected: e.expected,
      source: e.source,
      passed: e.passed,
      actual: e.actual,
    })),
    virtual: { start: report.virtual.start, end: report.virtual.end },
    wall_ms: report.wall_ms,
    speedup: report.speedup,
    readings_per_wall_second: report.readings_per_wall_second,
    faults: report.faults,
    mismatches: [...report.mismatches],
    dead_letters: {
      count: report.dead_letters.count,
      reasons: report.dead_letters.reasons.map((r) => ({ reason: r.reason, count: r.count })),
    },
  };
}

/**
 * JUnit XML as CI servers read it: one testsuite named after the scenario, one testcase per
 * expectation (expectations are checked at the end of the run, so each takes no time of its
 * own; the suite's time is the run's wall time), a <failure> for each that did not hold. The
 * seed, digest and file are suite properties, so a failed CI run says how to reproduce it.
 */
export function renderJunit(report: ScenarioReport): string {
  return `${XML_DECLARATION}\n${junitSuite(report, report.scenario, "").join("\n")}\n`;
}

/**
 * Several runs in one JUnit document: a <testsuites> root with the totals and one testsuite per
 * report (documents joined one after another would not be XML).
 */
export function renderJunitSuites(reports: readonly ScenarioReport[]): string {
  const tests = reports.reduce((n, r) => n + r.expectations.length, 0);
  const failures = reports.reduce((n, r) => n + r.expectations.filter((e) => !e.passed).length, 0);
  const wallMs = reports.reduce((n, r) => n + r.wall_ms, 0);
  const root = attrs({ name: "rpmlab run", tests, failures, errors: 0, time: seconds(wallMs) });
  const lines = [XML_DECLARATION, `<testsuites ${root}>`];
  const names = scenarioLabels(reports);
  for (const [i, report] of reports.entries()) {
    lines.push(...junitSuite(report, names[i]!, "  "));
  }
  lines.push("</testsuites>");
  return `${lines.join("\n")}\n`;
}

/** Several reports as one JSON array, each as renderJson writes it. */
export function renderJsonList(reports: readonly ScenarioReport[]): string {
  return `${JSON.stringify(reports.map(orderedReport), null, 2)}\n`;
}

const XML_DECLARATION = `<?xml version="1.0" encoding="UTF-8"?>`;

/**
 * Each run's name in a list of runs: its scenario, and its file when another run has the same
 * scenario name (envs/a/smoke.yaml and envs/b/smoke.yaml), and which run of that file it is
 * when the file was given twice (`smoke (scenarios/smoke.yaml, run 2)`): CI servers key a suite
 * and its tests by name, so two suites of one name showed as one. Numbered in the order of the
 * files, so the names are the same at every run of the same command.
 */
export function scenarioLabels(reports: readonly ScenarioReport[]): string[] {
  const count = (same: (r: ScenarioReport) => boolean) => reports.filter(same).length;
  const runs = new Map<string, number>();
  return reports.map((r) => {
    if (count((o) => o.scenario === r.scenario) === 1) return r.scenario;
    if (count((o) => o.scenario === r.scenario && o.file === r.file) === 1) {
      return `${r.scenario} (${r.file})`;
    }
    const key = JSON.stringify([r.scenario, r.file]);
    const run = (runs.get(key) ?? 0) + 1;
    runs.set(key, run);
    return `${r.scenario} (${r.file}, run ${run})`;
  });
}

function junitSuite(report: ScenarioReport, name: string, indent: string): string[] {
  const failures = report.expectations.filter((e) => !e.passed).length;
  const suiteAttrs = attrs({
    name,
    tests: report.expectations.length,
    failures,
    errors: 0,
    skipped: 0,
    time: seconds(report.wall_ms),
  });
  const lines = [
    `<testsuite ${suiteAttrs}>`,
    "  <properties>",
    `    <property ${attrs({ name: "file", value: report.file })}/>`,
    `    <property ${attrs({ name: "seed", value: report.seed })}/>`,
    `    <property ${attrs({ name: "digest", value: report.digest })}/>`,
    `    <property ${attrs({ name: "dead_letters", value: report.dead_letters.count })}/>`,
    ...READING_KEYS.map(
      (k) =>
        `    <property ${attrs({ name: `readings.${k}`, value: report.counts.readings[k] })}/>`,
    ),
    "  </properties>",
  ];
  const names = caseNames(report.expectations);
  report.expectations.forEach((e, i) => {
    const caseAttrs = attrs({ name: names[i]!, classname: junitClassname(name), time: "0" });
    if (e.passed) {
      lines.push(`  <testcase ${caseAttrs}/>`);
      return;
    }
    const message = `expected ${e.expected}, actual ${e.actual}`;
    const detail = `expected: ${e.expected}\nactual: ${e.actual}\nat: ${report.file} ${e.source}`;
    lines.push(
      `  <testcase ${caseAttrs}>`,
      `    <failure ${attrs({ message, type: "expectation" })}>${escapeXml(detail, false)}</failure>`,
      "  </testcase>",
    );
  });
  lines.push("</testsuite>");
  return lines.map((line) => indent + line);
}

/**
 * A testcase's classname: its suite's name without dots. Jenkins splits a classname at its last
 * dot into package and class, so `drill (envs/a/drill.yaml)` showed as class `yaml)` of package
 * `drill (envs/a/drill`; the file goes without its extension and a leading `./`, any other dot
 * (`envs/v1.2/`) as `_`. The testcase's name (the expectation, `readings.stored >= 100`) keeps
 * its dots: Jenkins splits a name only when there is no classname, and GitLab splits neither.
 */
function junitClassname(suite: string): string {
  return suite
    .replace(/\((?:\.\/)+/, "(")
    .replace(/\.ya?ml(?=[,)])/, "")
    .replaceAll(".", "_");
}

/**
 * Each expectation's testcase name: its text, and where it is in the file when another of the
 * suite has the same text (two api.request events at one time, one check written twice). CI
 * servers key a test by suite and name, so a repeated name showed one of the two, or merged a
 * failure into a pass.
 */
function caseNames(expectations: readonly ExpectationResult[]): string[] {
  const seen = new Map<string, number>();
  for (const e of expectations) seen.set(e.text, (seen.get(e.text) ?? 0) + 1);
  return expectations.map((e) => (seen.get(e.text)! > 1 ? `${e.text} (${e.source})` : e.text));
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function attrs(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}="${escapeXml(String(v), true)}"`)
    .join(" ");
}

// Characters XML 1.0 forbids outright (C0 controls but tab, LF, CR; lone surrogates; U+FFFE/F).
const FORBIDDEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters XML forbids.
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Escapes text for XML; in attributes also tab and line ends, which a parser would otherwise
 * normalise to spaces. Forbidden characters become U+FFFD.
 */
export function escapeXml(text: string, attribute: boolean): string {
  let out = text
    .replace(FORBIDDEN, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
  if (attribute) {
    out = out
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&apos;")
      .replace(/\t/g, "&#9;")
      .replace(/\n/g, "&#10;")
      .replace(/\r/g, "&#13;");
  } else {
    // A CR in text content would be normalised away by a parser as well.
    out = out.replace(/\r/g, "&#13;");
  }
  return out;
}

function sortedEntries(record: Record<string, number>): [string, number][] {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * A speed-up or a rate as the reports give it: whole from 100 up (209964), three significant
 * digits below (9.72, 0.5): a paced run slower than real time (`clock.speed: 0.5`, `rpmlab demo
 * --speed 0.5`) has a speed-up below 1, which rounded to a whole number read 0×.
 */
export function rate(n: number): number {
  if (!Number.isFinite(n) || n === 0) return n;
  return Math.abs(n) >= 100 ? Math.round(n) : Number(n.toPrecision(3));
}

function formatNumber(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}
