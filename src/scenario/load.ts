import { readFileSync } from "node:fs";
import { basename, extname } from "node:path";
import { parse as parseYaml, YAMLParseError } from "yaml";
import type { z } from "zod";
import { Catalogue } from "../catalogue/catalogue.ts";
import { type DataIssue, formatIssues, formatPath } from "../catalogue/loader.ts";
import { RpmlabError } from "../core/errors.ts";
import { PatientModels } from "../readings/patients.ts";
import { resolveScenario, type ScenarioLibrary } from "./resolve.ts";
import { scenarioSchema } from "./schema.ts";
import type { Scenario } from "./types.ts";
import { type YamlPosition, yamlFaultPosition, yamlLocator } from "./yaml-position.ts";

export type ScenarioCheck =
  | { readonly ok: true; readonly scenario: Scenario }
  | { readonly ok: false; readonly issues: readonly DataIssue[] };

/** The shipped device catalogue and patient models. */
export function defaultLibrary(): ScenarioLibrary {
  return { catalogue: Catalogue.load(), models: PatientModels.load() };
}

/**
 * Checks a scenario's text: YAML, then the schema, then the rules across fields (only once the
 * schema passed, since they read the parsed values). Every problem is returned, located by file
 * and path, e.g. `scenarios/smoke.yaml: cohorts[1].kit[0]: unknown device profile "X"`.
 */
export function checkScenario(
  text: string,
  file: string,
  library: ScenarioLibrary = defaultLibrary(),
): ScenarioCheck {
  let raw: unknown;
  try {
    // Merge keys (`<<: *anchor`) are not YAML 1.2 but every editor and CI tool takes them:
    // cohorts and accounts that differ in a key or two share the rest through an anchor.
    raw = parseYaml(text, { merge: true });
  } catch (error) {
    // As loadYamlDir: the first line of the parser's message says where; the code frame after
    // it would break the one-problem-per-line listing.
    const [firstLine = ""] = (error as Error).message.split("\n");
    const message = `not valid YAML: ${firstLine.replace(/:$/, "")}`;
    // Where the parser stopped, as file:line:column like every other problem.
    // An alias or merge key the parser took fails later, without one: found in the text.
    const at = error instanceof YAMLParseError ? error.linePos?.[0] : undefined;
    const position =
      at === undefined ? (yamlFaultPosition(text) ?? {}) : { line: at.line, column: at.col };
    return { ok: false, issues: [{ file, path: "(root)", message, ...position }] };
  }
  const parsed = scenarioSchema.safeParse(raw, {
    error: (issue) =>
      issue.input === undefined && (issue.code === "invalid_type" || issue.code === "invalid_union")
        ? "required"
        : undefined,
  });
  if (!parsed.success) {
    const locate = yamlLocator(text);
    return {
      ok: false,
      issues: parsed.error.issues.flatMap((issue) => toDataIssues(file, issue, locate)),
    };
  }
  const result = resolveScenario(parsed.data, file, baseName(file), library);
  if (!result.ok) {
    const locate = yamlLocator(text);
    return {
      ok: false,
      issues: result.issues.map((i) => issueAt(file, i.path, i.message, locate)),
    };
  }
  return result;
}

/** Like checkScenario, but throws one E_SCENARIO_INVALID listing every problem. */
export function parseScenario(
  text: string,
  file: string,
  library: ScenarioLibrary = defaultLibrary(),
): Scenario {
  const result = checkScenario(text, file, library);
  if (!result.ok) throw invalidScenario(file, result.issues);
  return result.scenario;
}

/** Reads and checks a scenario file; throws E_SCENARIO_INVALID listing every problem. */
export function loadScenario(file: string, library: ScenarioLibrary = defaultLibrary()): Scenario {
  const result = checkScenarioFile(file, library);
  if (!result.ok) throw invalidScenario(file, result.issues);
  return result.scenario;
}

/**
 * The scenarios of checked files, or one E_SCENARIO_INVALID listing every problem of every file
 * (a CI job running scenarios/*.yaml sees them all at once, as `rpmlab scenario validate` shows).
 */
export function scenariosOf(
  files: readonly string[],
  checks: readonly ScenarioCheck[],
): Scenario[] {
  const scenarios = checks.flatMap((check) => (check.ok ? [check.scenario] : []));
  if (scenarios.length === checks.length) return scenarios;
  const issues = checks.flatMap((check) => (check.ok ? [] : check.issues));
  if (files.length === 1) throw invalidScenario(files[0]!, issues);
  const failed = checks.length - scenarios.length;
  throw new RpmlabError(
    "E_SCENARIO_INVALID",
    `${issues.length} problem(s) in ${failed} of ${files.length} file(s):\n${formatIssues(issues)}`,
    { issues },
  );
}

/** Reads and checks a scenario file, returning its problems instead of throwing. */
export function checkScenarioFile(
  file: string,
  library: ScenarioLibrary = defaultLibrary(),
): ScenarioCheck {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const message = `cannot read file: ${(error as Error).message}`;
    return { ok: false, issues: [{ file, path: "(root)", message }] };
  }
  return checkScenario(text, file, library);
}

function invalidScenario(file: string, issues: readonly DataIssue[]): RpmlabError {
  return new RpmlabError(
    "E_SCENARIO_INVALID",
    `${issues.length} problem(s) in ${file}:\n${formatIssues(issues)}`,
    { file, issues },
  );
}

/** "scenarios/smoke.yaml" → "smoke". */
function baseName(file: string): string {
  return basename(file, extname(file));
}

type Locate = (path: ReadonlyArray<PropertyKey>) => YamlPosition | undefined;

/** An unknown key is reported at its own path, one issue per key, not at the object holding it. */
function toDataIssues(file: string, issue: z.core.$ZodIssue, locate: Locate): DataIssue[] {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => issueAt(file, [...issue.path, key], "unknown key", locate));
  }
  return [issueAt(file, issue.path, issue.message, locate)];
}

/** A problem at a path, with its line and column in the file when the file writes it. */
function issueAt(
  file: string,
  path: ReadonlyArray<PropertyKey>,
  message: string,
  locate: Locate,
): DataIssue {
  const position = locate(path);
  return {
    file,
    path: formatPath(path),
    message,
    ...(position === undefined ? {} : { line: position.line, column: position.column }),
  };
}
