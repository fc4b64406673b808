import { mkdirSync, statSync } from "node:fs";
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
