import { describe, expect, it } from "vitest";
import { Lab } from "../../src/app/lab.ts";
import { stopServed } from "../../src/cli/serve.ts";
import { serveConfig } from "../../src/config/serve-config.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { createLogger } from "../../src/core/logger.ts";
import { openStore } from "../../src/store/open.ts";

/**
 * README "rpmlab serve": at SIGINT or SIGTERM every part closes, the store last. A part that
 * failed to close was logged as "stop failed", naming no part, and serve exited 0 as after a
 * clean stop: a script (a CI job, a service manager) could not tell a store left unflushed.
 */
describe("rpmlab serve's shutdown", () => {
  it("closes every part, then fails naming the part that did not close (exit 1, not 0)", async () => {
    const config = serveConfig({ store: "memory", broker: "embedded:0", port: "0" }, {});
    const lab = new Lab(config, createLogger({ level: "silent" }), undefined, {
      openStore: async (spec, options) => {
        const store = await openStore(spec, options);
        const close = store.close.bind(store);
        return Object.assign(store, {
          close: async () => {
            await close();
            throw new Error("disk I/O error");
          },
        });
      },
    });
    const info = await lab.start();
    let error: unknown;
    try {
      await stopServed(lab, createLogger({ level: "silent" }), "SIGTERM");
    } catch (caught) {
      error = caught;
    }
    expect(isRpmlabError(error, "E_SHUTDOWN_INCOMPLETE")).toBe(true);
    expect((error as Error).message).toBe(
      "stopped on SIGTERM, but the store (disk I/O error) failed to close: what it held may not all be written",
    );
    // The parts after it closed all the same: the API no longer answers.
    await expect(fetch(`${info.base_url}/docs`)).rejects.toThrow();
  });

  it("stops quietly when every part closes", async () => {
    const config = serveConfig({ store: "memory", broker: "embedded:0", port: "0" }, {});
    const lab = new Lab(config, createLogger({ level: "silent" }));
    await lab.start();
    await expect(
      stopServed(lab, createLogger({ level: "silent" }), "SIGINT"),
    ).resolves.toBeUndefined();
  });
});
