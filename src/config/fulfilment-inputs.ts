import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { RpmlabError } from "../core/errors.ts";
import { isPlainObject } from "../core/field-errors.ts";
import { checkFulfilmentConfig } from "./fulfilment-config.ts";

/**
 * `key=value` assignments (`--fulfilment durations.in_transit=1d..3d`) as one override layer.
 * Values are read as YAML scalars, so `0.1` is a number and `[ups, usps]` a list.
 */
export function fulfilmentAssignments(assignments: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const assignment of assignments) {
    const eq = assignment.indexOf("=");
    const key = eq < 0 ? "" : assignment.slice(0, eq).trim();
    if (!/^[a-z_]+(\.[a-z_]+)*$/.test(key)) {
      throw new RpmlabError(
        "E_CONFIG_INVALID",
        `--fulfilment takes key=value, e.g. durations.in_transit=1d..3d or probabilities.carrier_hold=0.1; got "${assignment}"`,
        { field: "fulfilment" },
      );
    }
    const path = key.replace(/^fulfilment\./, "").split(".");
    let node = out;
    for (const part of path.slice(0, -1)) {
      const next = node[part];
      node[part] = next !== null && typeof next === "object" ? next : {};
      node = node[part] as Record<string, unknown>;
    }
    node[path[path.length - 1]!] = parseYaml(assignment.slice(eq + 1)) ?? "";
  }
  return out;
}

/**
 * A YAML or JSON file holding the fulfilment keys (or a `fulfilment:` section with them),
 * checked on its own so that its problems name the file, not the assignments laid over it.
 */
export function readFulfilmentFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `cannot read the fulfilment config ${path}: ${(error as Error).message}`,
      { field: "fulfilment-config", file: path },
    );
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `${path} is not YAML or JSON: ${(error as Error).message}`,
      { field: "fulfilment-config", file: path },
    );
  }
  const keys =
    isPlainObject(parsed) && isPlainObject(parsed.fulfilment) ? parsed.fulfilment : (parsed ?? {});
  const problem = (message: string) =>
    new RpmlabError("E_CONFIG_INVALID", `${path}: ${message}`, {
      field: "fulfilment-config",
      file: path,
    });
  // README "Fulfilment": the keys at the top or under fulfilment:. One beside the section was
  // ignored, unsaid (time_scale: 1440 there left shipping at days).
  const beside = keys === parsed || !isPlainObject(parsed) ? [] : Object.keys(parsed);
  const stray = beside.filter((key) => key !== "fulfilment");
  if (stray.length > 0) {
    throw problem(
      stray
        .map(
          (key) =>
            `${key}: unknown key beside fulfilment: (its keys go at the top or under fulfilment:, not both)`,
        )
        .join("; "),
    );
  }
  if (!isPlainObject(keys)) {
    throw problem(
      `holds ${Array.isArray(keys) ? "a list" : `the ${typeof keys} ${JSON.stringify(keys)}`}, not the fulfilment keys (a mapping such as "time_scale: 1440", README "Fulfilment")`,
    );
  }
  const checked = checkFulfilmentConfig(keys);
  if ("problems" in checked) {
    throw problem(checked.problems.map((p) => `${p.path.join(".")}: ${p.message}`).join("; "));
  }
  return keys;
}
