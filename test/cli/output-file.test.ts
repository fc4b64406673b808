import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeOutputFile } from "../../src/cli/output-file.ts";

/** A report a CI job reads is whole or absent: never the half a failed write left. */
describe("writeOutputFile", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-output-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** A disk that fills up halfway through the text, as writeFileSync meets ENOSPC. */
  const fullDisk = (file: string, text: string) => {
    writeFileSync(file, text.slice(0, text.length / 2));
    throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
  };

  it("writes the text to the file", () => {
    const file = join(dir, "report.xml");
    writeOutputFile(file, "<testsuite/>\n");
    expect(readFileSync(file, "utf8")).toBe("<testsuite/>\n");
    expect(readdirSync(dir)).toEqual(["report.xml"]);
  });

  it("leaves an earlier report whole, and no stray file, when the write fails halfway", () => {
    const file = join(dir, "report.xml");
    writeFileSync(file, '<testsuite name="earlier"/>\n');
    expect(() => writeOutputFile(file, '<testsuite name="new">…</testsuite>\n', fullDisk)).toThrow(
      /ENOSPC/,
    );
    expect(readFileSync(file, "utf8")).toBe('<testsuite name="earlier"/>\n');
    expect(readdirSync(dir)).toEqual(["report.xml"]);
  });

  it("leaves no file at all when there was none and the write fails halfway", () => {
    const file = join(dir, "report.xml");
    expect(() => writeOutputFile(file, "<testsuite/>\n", fullDisk)).toThrow(/ENOSPC/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
