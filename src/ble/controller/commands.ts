import type { CommandEntry } from "./command-entry.ts";
import { coreCommands } from "./commands-core.ts";
import { LE_COMMANDS } from "./commands-le.ts";

export type { CommandEntry, Outcome } from "./command-entry.ts";

/** Every command the controller answers, by opcode: the controller's handler table. */
export const COMMANDS: ReadonlyMap<number, CommandEntry> = new Map([
  ...coreCommands(() => IMPLEMENTED),
  ...LE_COMMANDS,
]);

const IMPLEMENTED: ReadonlySet<number> = new Set(COMMANDS.keys());
