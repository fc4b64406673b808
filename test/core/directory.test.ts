import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ensureDirectory } from "../../src/core/directory.ts";

describe("ensureDirectory", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "rpmlab-dir-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("creates the missing levels, and leaves an existing directory alone", () => {
    const dir = join(root, "a", "b", "c");
    ensureDirectory(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
    writeFileSync(join(dir, "kept"), "x");
    ensureDirectory(dir);
    expect(existsSync(join(dir, "kept"))).toBe(true);
  });

  it("throws the error of the level it cannot make: a file on the path", () => {
    writeFileSync(join(root, "file"), "x");
    expect(() => ensureDirectory(join(root, "file", "sub"))).toThrow(/ENOTDIR|EEXIST/);
  });

  // Node 20's mkdirSync({ recursive: true }) loops for ever on this path.
  it.skipIf(!existsSync("/proc/self"))(
    "returns with ENOENT where no directory can be made (/proc)",
    () => {
      expect(() => ensureDirectory("/proc/rpmlab-nope/lab")).toThrow(/ENOENT.*\/proc\/rpmlab-nope/);
    },
  );
});
