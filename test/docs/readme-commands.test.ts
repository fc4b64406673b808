import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.ts";
import { README_PATH } from "./readme-sections.ts";

/**
 * Every `bin/rpmlab …` command line of the README's sh blocks, continuation lines joined and
 * comments dropped: what a user copies into a terminal.
 */
function readmeCommandLines(text: string): string[] {
  const lines: string[] = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const raw of block[1]!.split("\n")) {
      const line = raw.replace(/(^|\s)#.*$/, "").trimEnd();
      const at = line.indexOf("bin/rpmlab ");
      if (at >= 0) lines.push(line.slice(at + "bin/rpmlab ".length));
      else if (/^\s+\S/.test(line) && lines.length > 0)
        lines[lines.length - 1] += ` ${line.trim()}`;
    }
  }
  // And the ones quoted in the prose: `rpmlab gateway --checkin-every 5m`.
  for (const span of text.matchAll(/`(?:bin\/)?rpmlab ([^`]+)`/g))
    lines.push(span[1]!.replaceAll("\n", " "));
  return lines.map((l) => l.replaceAll("\\", " "));
}

/** The command a line runs (subcommand words resolved as commander would) and its flags. */
function resolve(
  program: Command,
  line: string,
): { command: Command; path: string; flags: string[] } {
  let command = program;
  const path: string[] = [];
  for (const word of line.split(/\s+/)) {
    const sub = command.commands.find((c) => c.name() === word);
    if (!sub) break;
    command = sub;
    path.push(word);
  }
  const flags = [...line.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((m) => m[0]);
  return { command, path: path.join(" "), flags };
}

describe("README.md command lines", () => {
  const text = readFileSync(README_PATH, "utf8");
  const program = buildProgram({ out: () => {}, err: () => {} });
  const lines = readmeCommandLines(text);

  it("name commands that exist, with options they take (as `rpmlab <command> --help` lists them)", () => {
    expect(lines.length).toBeGreaterThan(30);
    const wrong: string[] = [];
    for (const line of lines) {
      const { command, path, flags } = resolve(program, line);
      if (path === "") wrong.push(`no command: ${line}`);
      const longs = new Set(command.options.map((o) => o.long));
      for (const flag of flags) {
        if (flag !== "--help" && !longs.has(flag)) wrong.push(`rpmlab ${path}: no ${flag}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
