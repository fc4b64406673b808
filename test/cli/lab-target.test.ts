import { afterEach, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN } from "../api/helpers.ts";
import { runCli } from "../catalogue/cli-io.ts";

/**
 * Commands that act through a running serve (`rpmlab orders`, `billing`, and `device`/`gateway`
 * issuing credentials) find it at --url (else $RPMLAB_URL, else http://127.0.0.1:8000) with
 * --admin-token (else $RPMLAB_ADMIN_TOKEN). README "Commands": an error names the option at
 * fault, so a user knows which of the two to fix.
 */
describe("a command acting through rpmlab serve", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("refuses a $RPMLAB_URL that is no http(s) URL by the variable's name, not --url's", async () => {
    vi.stubEnv("RPMLAB_URL", "127.0.0.1:8000");
    const { code, stderr } = await runCli("orders", "list", "--admin-token", ADMIN_TOKEN);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'rpmlab: E_CONFIG_INVALID: $RPMLAB_URL must be the http(s) base URL rpmlab serve printed, e.g. http://127.0.0.1:8000; got "127.0.0.1:8000"',
    );
  });
});
