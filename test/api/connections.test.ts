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

/** Sends raw bytes to the lab's port and reads the answer until the server closes. */
async function raw(port: number, request: string): Promise<string> {
  const socket = createConnection(port, "127.0.0.1");
  let answer = "";
  socket.on("data", (chunk: Buffer) => {
    answer += chunk.toString("latin1");
  });
  socket.on("error", () => undefined);
  await once(socket, "connect");
  socket.write(request);
  await once(socket, "close");
  return answer;
}

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

  it("what Node's HTTP parser refuses is answered {detail} too: headers over 16 KiB 431, bytes that are not HTTP 400", async () => {
    lab = await makeLab();
    await lab.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = lab.app.server.address() as AddressInfo;
    const long = await raw(
      port,
      `GET /clients/x/hwi/hwi-patients/?a=${"x".repeat(20_000)} HTTP/1.1\r\nHost: lab\r\n\r\n`,
    );
    expect(long).toMatch(/^HTTP\/1\.1 431 /);
    expect(long).toContain("Content-Type: application/json; charset=utf-8");
    expect(JSON.parse(long.slice(long.indexOf("\r\n\r\n") + 4))).toEqual({
      detail: "Request header fields too large: the request line and headers exceed 16 KiB.",
    });
    const garbage = await raw(port, "GET / HTTP/1.1\r\nBad Header\r\n\r\n");
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(garbage.slice(garbage.indexOf("\r\n\r\n") + 4))).toEqual({
      detail: "Malformed HTTP request.",
    });
  });
});
