import { readFileSync } from "node:fs";
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
});
