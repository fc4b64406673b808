import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../catalogue/cli-io.ts";

/** `rpmlab demo`'s refusals, in process (test/e2e/demo.test.ts runs it for real). */
describe("rpmlab demo refuses", () => {
  let blocker: Server | undefined;
  afterEach(async () => {
    if (blocker !== undefined) {
      blocker.close();
      await once(blocker, "close");
      blocker = undefined;
    }
  });

  it.each([
    ...["0", "fast", "0x3C", "0o74", "0b111100", "Infinity", "1e999", "", " ", "-1", "1e"].map(
      (speed): [string[], string] => [
        ["--speed", speed],
        `--speed must be a decimal number above 0 (virtual ms per wall ms, e.g. 60, 0.5 or 1e-3), got "${speed}"`,
      ],
    ),
    [
      ["--port", "http"],
      '--port must be a whole number from 0 (any free port) to 65535, got "http"',
    ],
    [["--port", "70000"], "--port must be a whole number from 0 (any free port) to 65535"],
  ])("%j with exit 2, before starting anything", async (args, message) => {
    const { code, stdout, stderr } = await runCli("demo", ...args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(`rpmlab: E_CONFIG_INVALID: ${message}`);
  });

  it("a taken port with exit 1, saying how to pick another", async () => {
    blocker = createServer();
    blocker.listen(0, "127.0.0.1");
    await once(blocker, "listening");
    const { port } = blocker.address() as AddressInfo;
    const { code, stdout, stderr } = await runCli("demo", "--port", String(port));
    expect(stdout).toBe("");
    expect(stderr).toBe(
      `rpmlab: E_PORT_IN_USE: HTTP port ${port} on 127.0.0.1 is taken: choose another with --port N, or --port 0 for any free one`,
    );
    // The environment is at fault, not the command line: exit 1, as for a taken broker port.
    expect(code).toBe(1);
  }, 30_000);

  it("an address not on this machine with exit 2, naming --host", async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
    const { code, stdout, stderr } = await runCli("demo", "--port", "0", "--host", "192.0.2.1");
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^rpmlab: E_CONFIG_INVALID: --host 192\.0\.2\.1: cannot listen on 192\.0\.2\.1:0 \(.*EADDRNOTAVAIL.*\); give an address of this machine, e\.g\. 127\.0\.0\.1 or 0\.0\.0\.0$/,
    );
    expect(code).toBe(2);
  }, 30_000);
});
