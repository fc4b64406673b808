import { closeSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Creates `dir` and its missing parents, one level at a time. Node 20's own
 * `mkdirSync(dir, { recursive: true })` never returns for a directory that cannot exist inside
 * an existing one (`/proc/nope`: mkdir answers ENOENT, the parent exists, and it tries again
 * for ever); here that mkdir's error is thrown, naming the path.
 */
export function ensureDirectory(dir: string): void {
  if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true) return;
  const parent = dirname(dir);
  if (parent !== dir) ensureDirectory(parent);
  try {
    mkdirSync(dir);
  } catch (error) {
    // Made meanwhile by another process: as good as made here.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (statSync(dir).isDirectory()) return;
    throw error;
  }
}

/**
 * Creates `path` empty, readable and writable by its owner only (0600), unless it exists: for
 * the files that hold what other users of the machine have no business reading (a store, an
 * outbox of readings). SQLite gives its -wal and -shm files the database file's mode. An
 * existing file keeps its mode: its owner chose it, or shares it on purpose.
 */
export function createPrivateFile(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return;
    throw error;
  }
  closeSync(fd);
}
