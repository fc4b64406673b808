import { accessSync, constants, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
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

/**
 * Writes a file a CI job reads (`run --report`) whole or not at all: the text goes to a
 * temporary file beside it, renamed over it once complete. A write that fails halfway (a full
 * disk) or a process killed meanwhile leaves the earlier file, or none, never half a report.
 */
export function writeOutputFile(
  file: string,
  text: string,
  write: (path: string, text: string) => void = writeFileSync,
): void {
  // In the same directory, so the rename stays on one file system (atomic there).
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    write(tmp, text);
    renameSync(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}
