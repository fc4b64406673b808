/**
 * Debian packages some suites drive (.ci/run installs them when missing): tshark decodes btsnoop
 * captures, Chromium renders the dashboard. When one is not installed its suite is skipped with
 * the reason printed, except on CI (which sets CI), where it fails: CI must run it.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { describe, it } from "vitest";

interface SystemTool {
  /** The command, found on PATH. */
  readonly command: string;
  /** Arguments that make it print its version and exit 0. */
  readonly versionArgs: readonly string[];
  /** The Debian package that provides it. */
  readonly apt: string;
}

export const TSHARK: SystemTool = { command: "tshark", versionArgs: ["--version"], apt: "tshark" };
export const CHROMIUM: SystemTool = {
  command: "chromium",
  versionArgs: ["--version"],
  apt: "chromium",
};

/** Python's jsonschema, the validator a Python platform team checks MQTT payloads with. */
export const PYTHON_JSONSCHEMA: SystemTool = {
  command: "python3",
  versionArgs: ["-c", "import jsonschema"],
  apt: "python3-jsonschema",
};

/** The tool's full path when it runs here; else the suite is skipped (or fails on CI). */
export function systemToolOrSkip(suite: string, tool: SystemTool): string | undefined {
  const probe = spawnSync(tool.command, [...tool.versionArgs], { encoding: "utf8" });
  if (probe.status === 0) return onPath(tool.command);
  const reason = `${tool.command} is not installed (apt-get install ${tool.apt})`;
  if (process.env.CI) {
    describe(suite, () => {
      it("runs on CI", () => {
        throw new Error(`${reason}: CI must run this suite`);
      });
    });
  } else {
    console.warn(`${suite}: ${reason}: skipped`);
    describe.skip(`${suite} (${reason}: skipped)`, () => {
      it(`needs ${tool.command}`, () => undefined);
    });
  }
  return undefined;
}

/** Where `command` is on PATH (a browser driver wants the executable's path). */
function onPath(command: string): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const path = join(dir, command);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {}
  }
  return command;
}
