import type { Command } from "commander";
import { type DataIssue, formatIssues } from "../catalogue/loader.ts";
import { RpmlabError } from "../core/errors.ts";
import { checkScenarioFile, defaultLibrary } from "../scenario/load.ts";
import type { CliIo } from "./io.ts";

/** `rpmlab scenario validate FILE...`: the scenario format of issue 7. */
export function registerScenarioCommand(program: Command, io: CliIo): void {
  const scenario = program
    .command("scenario")
    .description("Scenario files (scenarios/*.yaml): check them without running them");

  scenario
    .command("validate")
    .description(
      "Check scenario files against the schema and the rules across fields; print ok FILE, or each problem as file: path: message",
    )
    .argument("<files...>", "scenario files, e.g. scenarios/*.yaml")
    .action((files: string[]) => {
      const library = defaultLibrary();
      const issues: DataIssue[] = [];
      let failed = 0;
      for (const file of files) {
        const result = checkScenarioFile(file, library);
        if (result.ok) {
          io.out(`ok ${file}`);
        } else {
          failed += 1;
          issues.push(...result.issues);
        }
      }
      if (issues.length > 0) {
        throw new RpmlabError(
          "E_SCENARIO_INVALID",
          `${issues.length} problem(s) in ${failed} of ${files.length} file(s):\n${formatIssues(issues)}`,
          { issues },
        );
      }
    });
}
