/**
 * A port the lab must listen on, taken by another process, as a user meets it: each command that
 * listens fails the same way, `E_PORT_IN_USE` with exit 1 (the environment, not the command line,
 * is at fault), naming the port and the option that picks another. The taken port is one this
 * test holds, bound to port 0 first, so no fixed port is assumed free.
 */
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SystemClock } from "../../src/core/clock.ts";
import { Rng } from "../../src/core/rng.ts";
import { openStore } from "../../src/store/open.ts";
import { runToExit } from "./cli-process.ts";

/** The keys of the serve account in the store `spec`: none when it was never created. */
async function serveKeys(spec: string): Promise<number> {
  const clock = new SystemClock();
  const store = await openStore(spec, { clock, rng: new Rng("port-taken") });
  try {
    const account = await store.accounts.getByClientDomain("lab");
    return account === null ? 0 : (await store.apiKeys.list(account.id)).length;
  } finally {
    await store.close();
    clock.dispose();
  }
}

describe("a taken port", () => {
  let squatter: Server;
  let port: number;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-port-taken-"));
    squatter = createServer();
    squatter.listen(0, "127.0.0.1");
    await once(squatter, "listening");
    port = (squatter.address() as AddressInfo).port;
  });

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    squatter.close();
    await once(squatter, "close");
  });

  it("rpmlab serve --port: E_PORT_IN_USE, exit 1, saying how to pick another, and no key made", async () => {
    const store = `sqlite:${join(dir, "http.db")}`;
    const { code, out, err } = await runToExit([
      "serve",
      "--store",
      store,
      "--broker",
      "embedded:0",
      "--port",
      String(port),
      "--log-level",
      "warn",
    ]);
    expect(out).toBe("");
    expect(err).toBe(
      `rpmlab: E_PORT_IN_USE: HTTP port ${port} on 127.0.0.1 is taken: choose another with --port N, or --port 0 for any free one\n`,
    );
    expect(code).toBe(1);
    // A key is shown once: the start that failed printed none, so it must have made none.
    expect(await serveKeys(store)).toBe(0);
  }, 40_000);

  it("rpmlab serve --broker embedded:PORT: the same code and exit status, and no key made", async () => {
    const store = `sqlite:${join(dir, "broker.db")}`;
    const { code, out, err } = await runToExit([
      "serve",
      "--store",
      store,
      "--broker",
      `embedded:${port}`,
      "--port",
      "0",
      "--log-level",
      "warn",
    ]);
    expect(out).toBe("");
    expect(err).toBe(
      `rpmlab: E_PORT_IN_USE: port ${port} on 127.0.0.1 is taken, probably by another MQTT broker: use it with --broker mqtt://127.0.0.1:${port}, or choose another port with --broker embedded:PORT\n`,
    );
    expect(code).toBe(1);
    expect(await serveKeys(store)).toBe(0);
  }, 40_000);

  it("rpmlab controller --listen: the same code and exit status", async () => {
    const { code, out, err } = await runToExit([
      "controller",
      "--listen",
      `tcp://127.0.0.1:${port}`,
    ]);
    expect(out).toBe("");
    expect(err).toBe(
      `rpmlab: E_PORT_IN_USE: port ${port} on 127.0.0.1 is taken: choose another with --listen tcp://127.0.0.1:N, or tcp://127.0.0.1:0 for any free one\n`,
    );
    expect(code).toBe(1);
  }, 40_000);
});
