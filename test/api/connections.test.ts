/**
 * Connections a client holds open: a request whose body never finishes is timed out by the
 * server, and does not hold the lab's shutdown (README: SIGINT or SIGTERM shuts it down cleanly).
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { createConnection } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { REQUEST_TIMEOUT_MS } from "../../src/api/connections.ts";
import { apiKey, type Lab, makeLab } from "./helpers.ts";

describe("connections held open by a client", () => {
  let lab: Lab | undefined;
  afterEach(async () => {
    await lab?.close();
    lab = undefined;
  });

  it("a body that never finishes: the server times the request out, and closing the app ends it", async () => {
    lab = await makeLab();
    expect(lab.app.server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    await lab.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = lab.app.server.address() as AddressInfo;
    const arrived = once(lab.app.server, "request");
    const socket = createConnection(port, "127.0.0.1");
    await once(socket, "connect");
    const { authorization } = apiKey(lab.dev.key);
    // A Content-Length of 100 and one byte of it: the request stays under way.
    socket.write(
      `POST /clients/${lab.dev.account.clientDomain}/hwi/hwi-patients/ HTTP/1.1\r\nHost: lab\r\n` +
        `Authorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
    );
    await arrived;
    const closed = once(socket, "close");
    await lab.close();
    lab = undefined;
    await closed;
    expect(socket.destroyed).toBe(true);
  });
});
