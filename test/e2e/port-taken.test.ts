/**
 * A port the lab must listen on, taken by another process, as a user meets it: each command that
 * listens fails the same way, `E_PORT_IN_USE` with exit 1 (the environment, not the command line,
 * is at fault), naming the port and the option that picks another. The taken port is one this
 * test holds, bound to port 0 first, so no fixed port is assumed free.
 */
import { once } from "node:events";
import { type AddressInfo, createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runToExit } from "./cli-process.ts";

describe("a taken port", () => {
  let squatter: Server;
  let port: number;

  beforeAll(async () => {
    squatter = createServer();
    squatter.listen(0, "127.0.0.1");
    await once(squatter, "listening");
    port = (squatter.address() as AddressInfo).port;
  });

  afterAll(async () => {
    squatter.close();
    await once(squatter, "close");
  });

  it("rpmlab serve --port: E_PORT_IN_USE, exit 1, saying how to pick another", async () => {
    const { code, out, err } = await runToExit([
      "serve",
      "--store",
      "memory",
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
  }, 40_000);

  it("rpmlab serve --broker embedded:PORT: the same code and exit status", async () => {
    const { code, out, err } = await runToExit([
      "serve",
      "--store",
      "memory",
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
