import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { RpmlabError } from "../core/errors.ts";

/**
 * Refuses, before anything runs, a file a command will write at its end (`run --report`,
 * `--btsnoop`) that it could not: a missing directory, a directory in its place, no permission.
 * Nothing is created: a run that fails leaves no empty report behind. E_USAGE names the option.
 */
export function checkWritable(file: string, option: string): void {
  const refuse = (why: string) =>
    new RpmlabError("E_USAGE", `${option} ${file}: ${why}`, { field: option.replace(/^-+/, "") });
  const path = resolve(file);
  const existing = kindOf(path);
  if (existing === "directory") throw refuse("is a directory");
  // A file there is overwritten; none yet is created in its directory.
  const target = existing === "file" ? path : dirname(path);
  if (existing === undefined && kindOf(target) !== "directory") {
    throw refuse(`its directory ${target} does not exist`);
  }
  try {
    accessSync(target, constants.W_OK);
  } catch {
    throw refuse(existing === "file" ? "cannot be written" : `cannot create a file in ${target}`);
  }
}

function kindOf(path: string): "file" | "directory" | undefined {
  try {
    return statSync(path).isDirectory() ? "directory" : "file";
  } catch {
    return undefined;
  }
}
