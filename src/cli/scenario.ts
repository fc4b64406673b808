import type { Command } from "commander";
import { checkScenarioFile, defaultLibrary, scenariosOf } from "../scenario/load.ts";
import type { CliIo } from "./io.ts";

/** `rpmlab scenario validate FILE...`: the scenario format of issue 7. */
export function registerScenarioCommand(program: Command, io: CliIo): void {
  const scenario = program
    .command("scenario")
    .description("Scenario files (scenarios/*.yaml): check them without running them");

  scenario
    .command("validate")
    .description(
      "Check scenario files against the schema and the rules across fields; print ok FILE, or each problem as file:line:column: path: message",
    )
    .argument("<files...>", "scenario files, e.g. scenarios/*.yaml")
    .action((files: string[]) => {
      const library = defaultLibrary();
      const checks = files.map((file) => checkScenarioFile(file, library));
      for (const [i, check] of checks.entries()) if (check.ok) io.out(`ok ${files[i]}`);
      scenariosOf(files, checks);
    });
}
