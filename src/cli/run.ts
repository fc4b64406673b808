import { resolve } from "node:path";
import type { Command } from "commander";
import { RpmlabError } from "../core/errors.ts";
import { checkScenarioFile, defaultLibrary, scenariosOf } from "../scenario/load.ts";
import { createProgress, finishable } from "../scenario/progress.ts";
import {
  renderJson,
  renderJsonList,
  renderJunit,
  renderJunitSuites,
  renderText,
  type ScenarioReport,
  scenarioLabels,
} from "../scenario/report.ts";
import { checkTransports } from "../scenario/run/transports.ts";
import { runScenario } from "../scenario/runner.ts";
import type { CliIo } from "./io.ts";
import { checkWritable, writeOutputFile } from "./output-file.ts";
import { seedOf } from "./seed.ts";

interface RunFlags {
  readonly seed?: string;
  readonly report?: string[];
  readonly progress: boolean;
  readonly btsnoop?: string;
}

/** One report, or a list of them (several files) under one root. */
const REPORTS = {
  json: (reports: readonly ScenarioReport[]) =>
    reports.length === 1 ? renderJson(reports[0]!) : renderJsonList(reports),
  junit: (reports: readonly ScenarioReport[]) =>
    reports.length === 1 ? renderJunit(reports[0]!) : renderJunitSuites(reports),
} as const;

/**
 * `rpmlab run FILE...` (issue 7 §2): replays scenario files one after another on a virtual
 * clock, prints each report, and exits 0 only when every expectation of every file held.
 */
export function registerRunCommand(program: Command, io: CliIo): void {
  program
    .command("run")
    .description(
      "Run scenario files (scenarios/*.yaml) on a virtual clock and check their expectations; exit 0 only when all hold",
    )
    .argument("<files...>", "scenario files")
    .option(
      "--seed <seed>",
      "override the scenario's seed, read as the file reads seed: (42, 0x2A and 42.0 are 42; ward-3 is text): same seed, same digest",
    )
    .option(
      "--report <format-and-file...>",
      "also write the report(s) for CI: json FILE or junit FILE, or both (json A junit B); several scenario files make one report, a list",
    )
    .option("--no-progress", "no progress bar or progress lines")
    .option(
      "--btsnoop <file>",
      "write the HCI capture of the run (one scenario with transports.ble: emulated) as btsnoop, for Wireshark or btmon",
    )
    .action(async (files: string[], flags: RunFlags) => {
      const seed = flags.seed === undefined ? undefined : seedOf(flags.seed);
      const reportFiles = parseReports(flags.report);
      checkOutputs(files, reportFiles, flags.btsnoop);
      for (const { format, file } of reportFiles) checkWritable(file, `--report ${format}`);
      const library = defaultLibrary();
      const scenarios = scenariosOf(
        files,
        files.map((file) => checkScenarioFile(file, library)),
      );
      if (flags.btsnoop !== undefined) {
        checkWritable(flags.btsnoop, "--btsnoop");
        if (scenarios.length > 1) {
          throw new RpmlabError(
            "E_USAGE",
            `--btsnoop writes the capture of one run: give one scenario file, got ${scenarios.length}`,
            { field: "btsnoop" },
          );
        }
      }
      // Refused before any file runs, not once the files before it have (checkTransports says why).
      const capture = flags.btsnoop === undefined ? {} : { btsnoop: flags.btsnoop };
      for (const scenario of scenarios) checkTransports(scenario, capture);
      const reports: ScenarioReport[] = [];
      for (const scenario of scenarios) {
        const progress = flags.progress ? finishable(createProgress(process.stderr)) : undefined;
        const result = await runScenario(scenario, {
          ...(seed === undefined ? {} : { seed }),
          ...(progress === undefined ? {} : { progress }),
          ...(flags.btsnoop === undefined ? {} : { btsnoop: flags.btsnoop }),
        }).catch((error: unknown) => {
          progress?.finish();
          throw runFailed(error, scenario.name, reportFiles);
        });
        progress?.finish();
        reports.push(result);
        io.out(renderText(result));
      }
      for (const { format, file } of reportFiles) writeReport(file, REPORTS[format](reports));
      const labels = scenarioLabels(reports);
      const failed = labels.filter((_, i) => !reports[i]!.passed);
      if (failed.length > 0) {
        throw new RpmlabError(
          "E_SCENARIO_EXPECTATIONS",
          `expectations did not hold in ${failed.join(", ")}`,
        );
      }
    });
}

/**
 * A run that could not end (a part of the lab failed, e.g. its store: runner.ts): one
 * E_SCENARIO_FAILED (exit code 3, main.ts) whatever failed, whose code the message keeps,
 * saying which scenario, and that no report was written — a CI job that looks for the report
 * file is told why it is missing. An error that is not the lab's (a fault of rpmlab) keeps its
 * stack, as main.ts prints one, and exits 3 too: exit 1 would read as expectations not held.
 */
function runFailed(error: unknown, scenario: string, reportFiles: readonly ReportFile[]): unknown {
  const unwritten = reportFiles
    .map(({ format, file }) => `; --report ${format} ${file} not written`)
    .join("");
  // Refused before its lab started (a store that already holds a lab): as an invalid file,
  // exit 2, since the same run fails the same way until the scenario or the store changes.
  if (error instanceof RpmlabError && error.code === "E_SCENARIO_INVALID") {
    return new RpmlabError(
      error.code,
      `scenario ${scenario}: ${error.message}${unwritten}`,
      error.details,
      error,
    );
  }
  const what =
    error instanceof RpmlabError
      ? `${error.code === "E_SCENARIO_FAILED" ? "" : `${error.code}: `}${error.message}`
      : `unexpected error: ${(error as Error).stack ?? String(error)}`;
  return new RpmlabError(
    "E_SCENARIO_FAILED",
    `scenario ${scenario} did not run to its end: ${what}${unwritten}`,
    error instanceof RpmlabError ? error.details : {},
    error,
  );
}

/**
 * A report file checked at the start can still fail to be written (a full disk): then the file
 * is as it was before the run (writeOutputFile), not half a report.
 */
function writeReport(file: string, text: string): void {
  try {
    writeOutputFile(file, text);
  } catch (error) {
    throw new RpmlabError(
      "E_REPORT_WRITE",
      `--report ${file} not written: ${(error as Error).message} (the text report is above)`,
      { field: "report" },
      error,
    );
  }
}

/**
 * A report or capture file that is one of the scenario files, or a report in the capture's
 * file: the run would overwrite the scenario, or one output the other. Refused before anything
 * runs (two reports in one file: parseReports).
 */
function checkOutputs(
  files: readonly string[],
  reportFiles: readonly ReportFile[],
  btsnoop: string | undefined,
): void {
  const inputs = new Set(files.map((file) => resolve(file)));
  const refuse = (option: string, file: string, why: string) =>
    new RpmlabError("E_USAGE", `${option} ${file}: ${why}`, {
      field: option === "--btsnoop" ? "btsnoop" : "report",
    });
  const scenarioFile = "is a scenario file of this run, which it would overwrite";
  if (btsnoop !== undefined && inputs.has(resolve(btsnoop))) {
    throw refuse("--btsnoop", btsnoop, scenarioFile);
  }
  for (const { format, file } of reportFiles) {
    if (inputs.has(resolve(file))) throw refuse(`--report ${format}`, file, scenarioFile);
    if (btsnoop !== undefined && resolve(file) === resolve(btsnoop)) {
      throw refuse(`--report ${format}`, file, "the --btsnoop capture takes that file");
    }
  }
}

interface ReportFile {
  readonly format: keyof typeof REPORTS;
  readonly file: string;
}

/** `--report` values, format and file pairs (commander joins repeated options into one list). */
function parseReports(values: string[] | undefined): ReportFile[] {
  if (values === undefined) return [];
  const out: ReportFile[] = [];
  for (let i = 0; i < values.length; i += 2) {
    const format = values[i];
    const file = values[i + 1];
    if (!(format === "json" || format === "junit") || file === undefined) {
      throw new RpmlabError(
        "E_USAGE",
        `--report takes a format and a file: --report json FILE, --report junit FILE, or both; got "${values.join(" ")}"`,
        { field: "report" },
      );
    }
    if (out.some((r) => resolve(r.file) === resolve(file))) {
      throw new RpmlabError(
        "E_USAGE",
        `--report ${format} ${file}: that file already takes the ${out.find((r) => resolve(r.file) === resolve(file))!.format} report; give each report its own file`,
        { field: "report" },
      );
    }
    out.push({ format, file });
  }
  return out;
}
