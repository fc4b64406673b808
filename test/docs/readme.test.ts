import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { README_PATH, renderReadme } from "./readme-sections.ts";

describe("README.md", () => {
  it("has current generated sections (run `npm run docs` after changing profiles or error codes)", () => {
    const text = readFileSync(README_PATH, "utf8");
    expect(renderReadme(text)).toBe(text);
  });

  it("names the two fresh-clone commands that CI and users run", () => {
    const text = readFileSync(README_PATH, "utf8");
    const freshClone = text.slice(
      text.indexOf("## On a fresh clone"),
      text.indexOf("## What works"),
    );
    expect(freshClone).toMatch(/^bin\/rpmlab demo +# main job/m);
    expect(freshClone).toMatch(/^npm test +# the test suite/m);
    expect(text).toMatch(/bin\/rpmlab serve /);
  });

  it("names only files that are in the repository (the design notes and the spec are not)", () => {
    const text = readFileSync(README_PATH, "utf8");
    const root = dirname(README_PATH);
    // A path from the repository root, or a Markdown document, in backticks or as a link target;
    // patterns (`profiles/patients/*.yaml`, `scenarios/<name>.yaml`) name no one file.
    const named = [...text.matchAll(/`([^`\s]+)`|\]\(([^)#\s]+)\)/g)]
      .map((m) => (m[1] ?? m[2])!)
      .filter((p) => /^(src|test|scenarios|profiles|bin|packages|\.ci)\/|\.md$/.test(p))
      .filter((p) => !/[*<>{}]/.test(p));
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((p) => !existsSync(join(root, p)))).toEqual([]);
  });
});
