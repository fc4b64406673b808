import { Command, CommanderError, type HelpContext } from "commander";
import { type ErrorCode, isRpmlabError } from "../core/errors.ts";
import { registerAccountsCommand } from "./accounts.ts";
import { registerBillingCommand } from "./billing.ts";
import { registerBleCommands } from "./ble.ts";
import { registerDeadLettersCommand } from "./dead-letters.ts";
import { registerDemoCommand } from "./demo.ts";
import { type CliIo, ignoreClosedOutput, processIo } from "./io.ts";
import { registerKeysCommand } from "./keys.ts";
import { registerOrdersCommand } from "./orders.ts";
import { registerProfilesCommand } from "./profiles.ts";
import { registerReadingsCommand } from "./readings.ts";
import { registerRunCommand } from "./run.ts";
import { registerScenarioCommand } from "./scenario.ts";
import { registerServeCommand } from "./serve.ts";
import { registerWebhooksCommand } from "./webhooks.ts";

/** Builds the commander program. Commands parse their options and call into src/; no logic here. */
export function buildProgram(io: CliIo): Command {
  const program = new Command("rpmlab")
    .description(
      "Emulation lab for remote patient monitoring hardware: the vendor's cloud API, virtual BLE and cellular devices, gateways, MQTT ingestion, webhooks, fulfilment and scenarios.",
    )
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s),
      writeErr: (s) => io.err(s),
      outputError: (s, write) => write(asUsageError(s)),
    });
  registerProfilesCommand(program, io);
  registerReadingsCommand(program, io);
  registerServeCommand(program, io);
  registerAccountsCommand(program, io);
  registerKeysCommand(program, io);
  registerOrdersCommand(program, io);
  registerBillingCommand(program, io);
  registerWebhooksCommand(program, io);
  registerDeadLettersCommand(program, io);
  registerBleCommands(program, io);
  registerScenarioCommand(program, io);
  registerRunCommand(program, io);
  registerDemoCommand(program, io);
  requireCommand(program);
  return program;
}

/**
 * A command group run without one of its commands (`rpmlab accounts`) is a usage error like any
 * other of the parser's (README "Commands": `rpmlab: E_USAGE: …`, then the usage, exit 2), where
 * commander would print the help alone. An action on the group is what lets it say so; commander
 * drops the implicit `help` command of a group with an action, so it is asked for again.
 */
function requireCommand(group: Command): void {
  if (group.commands.length === 0) return;
  for (const command of group.commands) requireCommand(command);
  refuseUnknownHelpTopic(group);
  const names = group.commands.map((c) => c.name()).join(", ");
  const path = ["rpmlab", ...ancestorNames(group)].join(" ");
  group
    .helpCommand(true)
    .allowExcessArguments(true)
    .action(() => {
      if (group.args.length > 0) {
        group.error(`unknown command '${group.args[0]}'`, { code: "commander.unknownCommand" });
      }
      group.error(`missing command: ${path} takes ${names}`);
    });
}

/**
 * `rpmlab help nosuch` is an unknown command like `rpmlab nosuch` (README "Commands": the
 * `rpmlab: E_USAGE: …` line, then the usage, exit 2): commander printed the help alone. It asks
 * a group for its help as an error only there, `help` followed by a name it has no command of
 * (groups without a command have an action: requireCommand), so that call says which name.
 */
function refuseUnknownHelpTopic(group: Command): void {
  const help = group.help.bind(group);
  group.help = ((context?: HelpContext) => {
    if (context?.error) {
      group.error(`unknown command '${group.args[1] ?? ""}'`, { code: "commander.unknownCommand" });
    }
    return help(context);
  }) as Command["help"];
}

function ancestorNames(command: Command): string[] {
  return command.parent ? [...ancestorNames(command.parent), command.name()] : [];
}

/**
 * commander's own errors ("error: unknown option '--x'") in the form of every other error, so a
 * script matches one prefix (README "Commands": `rpmlab: <CODE>: <message>`, E_USAGE, exit 2).
 */
function asUsageError(message: string): string {
  return `rpmlab: E_USAGE: ${message.replace(/^error: /, "")}`;
}

/**
 * Exit codes other than 1 (README "Commands"), so a CI job tells its outcomes apart without
 * reading stderr: 2 when the input is wrong and nothing ran (the command line, a config,
 * profile or scenario file), 3 when a scenario run could not end or its report not be written (the lab
 * or the machine failed: worth a retry). `rpmlab run`'s 1 is then expectations that did not hold.
 */
const EXIT_CODES: Partial<Record<ErrorCode, number>> = {
  E_USAGE: 2,
  E_CONFIG_INVALID: 2,
  E_PROFILE_INVALID: 2,
  E_SCENARIO_INVALID: 2,
  E_SCENARIO_FAILED: 3,
  E_REPORT_WRITE: 3,
};

/**
 * Runs the CLI and returns the exit code: 0 on success, 1 when a command fails (message on
 * stderr, prefixed with its stable error code), 2 on a usage error, 3 when a run failed
 * (EXIT_CODES). A taken port (E_PORT_IN_USE) is a failure, not a usage error: the same
 * command works once the port is free.
 */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  if (io === processIo) ignoreClosedOutput();
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit through here with code 0; usage errors are already printed.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (isRpmlabError(error)) {
      io.err(`rpmlab: ${error.code}: ${error.message}`);
      return EXIT_CODES[error.code] ?? 1;
    }
    io.err(`rpmlab: unexpected error: ${(error as Error).stack ?? String(error)}`);
    return 1;
  }
}
