import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN, type Lab, makeLab } from "../api/helpers.ts";
import { runCli } from "../catalogue/cli-io.ts";

/**
 * Commands that act through a running serve (`rpmlab orders`, `billing`, and `device`/`gateway`
 * issuing credentials) find it at --url (else $RPMLAB_URL, else http://127.0.0.1:8000) with
 * --admin-token (else $RPMLAB_ADMIN_TOKEN). README "Commands": an error names the option at
 * fault, so a user knows which of the two to fix.
 */
describe("a command acting through rpmlab serve", () => {
  let server: Server | undefined;
  let lab: Lab | undefined;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await lab?.close();
    lab = undefined;
    if (server !== undefined) await new Promise((done) => server!.close(done));
    server = undefined;
  });

  async function listening(s: Server): Promise<string> {
    server = s;
    await new Promise<void>((done) => s.listen(0, "127.0.0.1", done));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  it("at a URL where another web server answers (a Django dev server on 8000), says so and prints no page", async () => {
    const page = "<!DOCTYPE html>\n<html><body><h1>Page not found (404)</h1></body></html>\n";
    const url = await listening(
      createServer((_request, response) => {
        response.writeHead(404, { "content-type": "text/html; charset=utf-8" });
        response.end(page);
      }),
    );
    const { code, stdout, stderr } = await runCli(
      "orders",
      "list",
      ...["--url", url, "--admin-token", ADMIN_TOKEN],
    );
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      `rpmlab: E_LAB_UNREACHABLE: what answers at ${url} is not an rpmlab serve (GET /lab/v1/orders/ answered 404 text/html, not the lab admin API's JSON): give the base URL rpmlab serve printed with --url`,
    );
  });

  it.each([
    ["--admin-token", (token: string) => ["--admin-token", token]],
    [
      "$RPMLAB_ADMIN_TOKEN",
      (token: string) => {
        vi.stubEnv("RPMLAB_ADMIN_TOKEN", token);
        return [];
      },
    ],
  ])(
    "with a token that is not the serve's, names where it came from (%s)",
    async (source, give) => {
      lab = await makeLab();
      await lab.app.listen({ host: "127.0.0.1", port: 0 });
      const url = `http://127.0.0.1:${(lab.app.server.address() as AddressInfo).port}`;
      const { code, stderr } = await runCli(
        "billing",
        ...["--url", url, ...give("not-the-lab-admin-token")],
      );
      expect(code).toBe(1);
      expect(stderr).toBe(
        `rpmlab: E_API_UNAUTHENTICATED: the rpmlab serve at ${url} refused the admin token of ${source} (401 Invalid admin token.): give the admin token it printed at start`,
      );
    },
  );

  it("refuses a $RPMLAB_URL that is no http(s) URL by the variable's name, not --url's", async () => {
    vi.stubEnv("RPMLAB_URL", "127.0.0.1:8000");
    const { code, stderr } = await runCli("orders", "list", "--admin-token", ADMIN_TOKEN);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'rpmlab: E_CONFIG_INVALID: $RPMLAB_URL must be the http(s) base URL rpmlab serve printed, e.g. http://127.0.0.1:8000; got "127.0.0.1:8000"',
    );
  });
});
