import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Lab, makeLab } from "../api/helpers.ts";
import { README_PATH } from "./readme-sections.ts";

/** The first path segment after each API root: the name a reader looks up in the README. */
const ROOTS = ["/hwi/", "/asr/", "/lab/v1/", "/api/v2/hwi/"];

function endpointName(url: string): string | null {
  for (const root of ROOTS) {
    const at = url.indexOf(root);
    if (at < 0) continue;
    const segment = url.slice(at + root.length).split("/")[0] ?? "";
    return segment === "" || segment.startsWith(":") ? null : segment;
  }
  return null;
}

describe("README.md names every endpoint the API serves", () => {
  let lab: Lab;
  const urls: string[] = [];
  beforeAll(async () => {
    lab = await makeLab();
    lab.app.addHook("onRoute", (route) => {
      if (route.schema?.hide !== true) urls.push(route.url);
    });
    await lab.app.ready();
  });
  afterAll(() => lab.close());

  it("by its path, so a user finds how to call it (e.g. hwi-hardware-uuid-logs)", () => {
    const text = readFileSync(README_PATH, "utf8");
    const names = [...new Set(urls.map(endpointName).filter((n): n is string => n !== null))];
    expect(names.length).toBeGreaterThan(20);
    // As a whole name: "hwi-devices" inside "hwi-devices-x" or "v2hwi-devices" does not count.
    const named = (name: string) => new RegExp(`(?<![\\w-])${name}(?![\\w-])`).test(text);
    expect(names.filter((name) => !named(name))).toEqual([]);
  });
});
