import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpSender } from "../../src/webhooks/http-sender.ts";
import { within } from "../mqtt/helpers.ts";

/**
 * The sender keeps a keep-alive pool per endpoint origin while it has connections, and none for
 * an origin it no longer talks to: a long-running serve whose endpoints change (tunnel URLs, CI
 * receivers on fresh ports) held about 20 KB per origin it had ever posted to, for good.
 */

const CONFIG = { timeoutMs: 2000, concurrency: 4 };

/** The origins the sender holds a pool for (undici's Agent keeps them under its "clients"). */
function pooledOrigins(sender: HttpSender): number {
  const agent = (sender as unknown as { agent?: object }).agent;
  if (agent === undefined) return 0;
  const clients = Object.getOwnPropertySymbols(agent).find((s) => s.description === "clients");
  return (Reflect.get(agent, clients!) as Map<string, unknown>).size;
}

/** Resolves once `predicate` holds, checked at every event-loop turn (a deadline, not a sleep). */
async function until(predicate: () => boolean, what: string): Promise<void> {
  let abandoned = false;
  const poll = async () => {
    while (!predicate() && !abandoned) await new Promise((resolve) => setImmediate(resolve));
  };
  await within(poll(), what).finally(() => {
    abandoned = true;
  });
}

describe("webhook HTTP sender", () => {
  const servers: Server[] = [];
  const senders: HttpSender[] = [];
  afterEach(async () => {
    await Promise.all(senders.splice(0).map((s) => s.close()));
    await Promise.all(
      servers.splice(0).map((s) => new Promise((resolve) => s.close(() => resolve(undefined)))),
    );
  });

  async function receiver(keepAliveTimeout: number): Promise<string> {
    const server = createServer((_req, res) => res.end("ok"));
    server.keepAliveTimeout = keepAliveTimeout;
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("keeps a pool while an endpoint's connections live, and drops it once they have closed", async () => {
    const sender = new HttpSender(CONFIG);
    senders.push(sender);
    // Ten endpoints whose receivers close idle connections at once, one that keeps them.
    const shortLived = await Promise.all(Array.from({ length: 10 }, () => receiver(1)));
    const kept = await receiver(60_000);
    for (const origin of [...shortLived, kept]) {
      const answer = await sender.send({ url: `${origin}/hook`, headers: {}, body: "{}" });
      expect(answer.statusCode).toBe(200);
    }
    await until(() => pooledOrigins(sender) === 1, "the closed endpoints' pools to go");
    // The live one is reused, and a dropped one comes back when posted to again.
    expect((await sender.send({ url: `${kept}/hook`, headers: {}, body: "{}" })).statusCode).toBe(
      200,
    );
    const again = await sender.send({ url: `${shortLived[0]}/hook`, headers: {}, body: "{}" });
    expect(again.statusCode).toBe(200);
  });

  it("keeps no pool for an endpoint that refuses connections", async () => {
    const sender = new HttpSender(CONFIG);
    senders.push(sender);
    const gone = await receiver(1);
    const server = servers.pop()!;
    await new Promise((resolve) => server.close(resolve));
    const answer = await sender.send({ url: `${gone}/hook`, headers: {}, body: "{}" });
    expect(answer.error).toBe("connection refused");
    await until(() => pooledOrigins(sender) === 0, "the refused endpoint's pool to go");
  });

  it("ends an answer whose body trickles on past a timeout after its headers: the status counts, what came is the snippet", async () => {
    // A receiver that said 200 at once, then keeps its body going a byte at a time, each well
    // within the timeout between chunks: the attempt held its lane's slot (and outlived its
    // claim) for as long as 64 KiB took to arrive, hours.
    const trickles = new Set<NodeJS.Timeout>();
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200).write("ok");
        const trickle = setInterval(() => res.write("."), 20);
        trickles.add(trickle);
        res.on("close", () => clearInterval(trickle));
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const sender = new HttpSender({ timeoutMs: 300, concurrency: 1 });
    senders.push(sender);
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await within(
        sender.send({ url: `http://127.0.0.1:${port}/hook`, headers: {}, body: "{}" }),
        "the trickled answer to end",
      );
      expect(answer).toMatchObject({ statusCode: 200, error: null });
      // Marked as cut, as a body past 512 characters is.
      expect(answer.snippet).toMatch(/^ok\.*…$/);
      expect(answer.latencyMs).toBeGreaterThanOrEqual(300);
    } finally {
      for (const trickle of trickles) clearInterval(trickle);
      server.closeAllConnections();
    }
  });
});
