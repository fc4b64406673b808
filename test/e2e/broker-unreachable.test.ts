/**
 * A broker nobody listens on, as a user meets it with `rpmlab device <cellular type>`: the
 * command reports E_BROKER_UNAVAILABLE and exits 1 by itself. It used to print the error and
 * then never exit: the dropped MQTT client kept a reconnect interval armed (src/mqtt/client.ts).
 * The port is one this test bound to port 0 and closed again, so no fixed port is assumed free.
 */
import { once } from "node:events";
import { type AddressInfo, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { runToExit } from "./cli-process.ts";

async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

describe("an unreachable broker", () => {
  it("rpmlab device <cellular type>: E_BROKER_UNAVAILABLE, exit 1, and the process ends", async () => {
    const port = await closedPort();
    const { code, err } = await runToExit(
      [
        "device",
        "Vendor Cellular BPM",
        "--broker",
        `mqtt://127.0.0.1:${port}`,
        "--days",
        "1",
        "--speed",
        "max",
      ],
      20_000,
    );
    expect(err).toContain("E_BROKER_UNAVAILABLE");
    expect(err).toContain(`mqtt://127.0.0.1:${port}`);
    expect(code).toBe(1);
  });
});
