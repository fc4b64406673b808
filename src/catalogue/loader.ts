import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { RpmlabError } from "../core/errors.ts";

/** One problem found in a data file, located by file and path inside it. */
export interface DataIssue {
  file: string;
  path: string;
  message: string;
  /** Where in the file, 1-based, when known (scenario files: src/scenario/yaml-position.ts). */
  line?: number;
  column?: number;
}

export type LoadResult<T> =
  | { ok: true; items: Array<{ file: string; value: T }> }
  /** items: the files that did pass, so checks across files can still run on them. */
  | { ok: false; issues: DataIssue[]; items: Array<{ file: string; value: T }> };

/** `cohorts[1].kit[0]`; "(root)" for the whole file. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.length === 0
    ? "(root)"
    : path
        .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
        .join("");
}

/**
 * Parses and validates every *.yaml file of a folder against a schema, collecting every issue of
 * every file instead of stopping at the first, so one run shows all that needs fixing.
 */
export function loadYamlDir<S extends z.ZodType>(dir: string, schema: S): LoadResult<z.output<S>> {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"))
      .sort();
  } catch (error) {
    return {
      ok: false,
      issues: [
        { file: dir, path: "(root)", message: `cannot read folder: ${(error as Error).message}` },
      ],
      items: [],
    };
  }
  const issues: DataIssue[] = [];
  const items: Array<{ file: string; value: z.output<S> }> = [];
  for (const name of files) {
    const file = join(dir, name);
    let raw: unknown;
    try {
      raw = parseYaml(readFileSync(file, "utf8"));
    } catch (error) {
      // The parser's message ends in a multi-line code frame; its first line already says where
      // ("at line 2, column 1"), and keeping one issue per line keeps the listing readable.
      const [firstLine = ""] = (error as Error).message.split("\n");
      issues.push({
        file,
        path: "(root)",
        message: `not valid YAML: ${firstLine.replace(/:$/, "")}`,
      });
      continue;
    }
    const parsed = schema.safeParse(raw);
    if (parsed.success) items.push({ file, value: parsed.data });
    else
      for (const issue of parsed.error.issues)
        issues.push({ file, path: formatPath(issue.path), message: issue.message });
  }
  if (files.length === 0) issues.push({ file: dir, path: "(root)", message: "no .yaml files" });
  return issues.length > 0 ? { ok: false, issues, items } : { ok: true, items };
}

export function formatIssues(issues: readonly DataIssue[]): string {
  return issues
    .map((i) => {
      const at = i.line === undefined ? "" : `:${i.line}:${i.column ?? 1}`;
      return `${i.file}${at}: ${i.path}: ${i.message}`;
    })
    .join("\n");
}

/** Like loadYamlDir, but throws one E_PROFILE_INVALID error listing every issue. */
export function loadYamlDirOrThrow<S extends z.ZodType>(dir: string, schema: S) {
  const result = loadYamlDir(dir, schema);
  if (!result.ok) {
    throw new RpmlabError(
      "E_PROFILE_INVALID",
      `${result.issues.length} problem(s) in ${basename(dir)}:\n${formatIssues(result.issues)}`,
      { file: dir, issues: result.issues },
    );
  }
  return result.items;
}
