/** End to end: the shipped bin/rpmlab as a user runs it, in a child process. */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("bin/rpmlab profiles list --json", () => {
  it("exits 0 and prints the catalogue as JSON", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["bin/rpmlab", "profiles", "list", "--json"],
      { cwd: root },
    );
    const list = JSON.parse(stdout) as Array<{ name: string; sensor_code: string | null }>;
    expect(list).toHaveLength(18);
    expect(list.find((p) => p.name === "Vendor Inhaler Sensor")?.sensor_code).toBe("25");
    expect(list.find((p) => p.name === "Vendor Cellular Scale")?.sensor_code).toBeNull();
  });
});
