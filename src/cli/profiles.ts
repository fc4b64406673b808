import type { Command } from "commander";
import type { CliIo } from "./io.ts";

// Being written in parallel; replaced by the real command.
export function registerProfilesCommand(_program: Command, _io: CliIo): void {}
