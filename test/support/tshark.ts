/**
 * tshark (Debian's package; .ci/run installs it when missing) for the capture tests. When it is
 * not installed a suite is skipped with the reason printed, except on CI (which sets CI), where
 * it fails: CI must run it.
 */
import { spawnSync } from "node:child_process";
import { describe, it } from "vitest";

export function tsharkOrSkip(suite: string): string | undefined {
  const probe = spawnSync("tshark", ["--version"], { encoding: "utf8" });
  if (probe.status === 0) return "tshark";
  const reason = `tshark is not installed (apt-get install tshark)`;
  if (process.env.CI) {
    describe(suite, () => {
      it("runs on CI", () => {
        throw new Error(`${reason}: CI must run the capture tests`);
      });
    });
  } else {
    console.warn(`${suite}: ${reason}: skipped`);
    describe.skip(`${suite} (${reason}: skipped)`, () => {
      it("needs tshark", () => undefined);
    });
  }
  return undefined;
}
