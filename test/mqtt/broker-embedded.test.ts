import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import { type Broker, createBroker } from "../../src/mqtt/broker.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { topicRefused } from "../../src/mqtt/embedded-broker.ts";
import { brokerContract } from "./broker-contract.ts";
import { Inbox, within } from "./helpers.ts";

const FIXTURE = fileURLToPath(new URL("./fixtures/start-stop-broker.ts", import.meta.url));

brokerContract("embedded aedes (port 0)", { open: () => started("embedded:0") });

async function started(spec: string): Promise<Broker> {
  const broker = createBroker(spec);
  await broker.start();
  return broker;
}

describe("embedded broker", () => {
  it("sees a client's own credentials, not those the broker URL it was given carries", async () => {
    const seen: string[] = [];
    const broker = createBroker("embedded:0", {
      auth: {
        authenticate: async (username) => {
          seen.push(username);
          return { username, role: "service" };
        },
      },
    });
    await broker.start();
    // "localhost": over TCP, as a client of another process connects (not the in-process pair).
    const shared = broker.url.replace("//127.0.0.1", "//rpmlab-ingest:ingest-secret@localhost");
    try {
      const device = await connectClient(shared, {
        clientId: "own-credentials",
        username: "356938035643801",
        password: "device-secret",
        reconnectPeriod: 0,
      });
      await device.endAsync();
      expect(seen).toEqual(["356938035643801"]);
    } finally {
      await broker.stop();
    }
  });

  it("listens on the address it is given (serve's --host), on loopback only by default", async () => {
    const reach = (host: string, port: number) =>
      new Promise<boolean>((resolve) => {
        const socket = connect({ host, port }, () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
      });
    // 127.0.0.2 is another loopback address on Linux: reachable here, and not 127.0.0.1.
    const other = createBroker("embedded:0", { host: "127.0.0.2" });
    await other.start();
    const plain = createBroker("embedded:0");
    await plain.start();
    try {
      const port = Number(new URL(other.url).port);
      expect(other.url).toBe(`mqtt://127.0.0.2:${port}`);
      expect(await reach("127.0.0.2", port)).toBe(true);
      expect(await reach("127.0.0.1", port)).toBe(false);
      expect(plain.url).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await other.stop();
      await plain.stop();
    }
  });

  it("says the port is taken and how to use the broker already on it", async () => {
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
    const port = (squatter.address() as { port: number }).port;
    try {
      const broker = createBroker(`embedded:${port}`);
      const error = await broker.start().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RpmlabError);
      expect((error as RpmlabError).code).toBe("E_PORT_IN_USE");
      expect((error as RpmlabError).message).toContain(`port ${port}`);
      expect((error as RpmlabError).message).toContain(`--broker mqtt://127.0.0.1:${port}`);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  it("has no URL before start; after stop() the port is closed and the process can exit", async () => {
    const broker = createBroker("embedded:0");
    expect(() => broker.url).toThrow(/before start/);
    await broker.start();
    expect(broker.url).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    const url = broker.url;
    await broker.stop();
    await broker.stop(); // idempotent
    await expect(
      connectClient(url, { clientId: "late", clean: true, reconnectPeriod: 0 }),
    ).rejects.toMatchObject({ code: "E_BROKER_UNAVAILABLE" });
    // A process that started and stopped a broker ends by itself: nothing keeps it alive.
    const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], { stdio: "pipe" });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const code = await within(
      new Promise<number | null>((resolve) => child.once("exit", resolve)),
      "the process to exit after stop()",
      20_000,
    ).finally(() => child.kill());
    expect(out).toBe("stopped\n");
    expect(code).toBe(0);
  });

  it.each([
    ["", "has an empty level"],
    ["/rpm/v1/gw/297056120BD7/up", "has an empty level"],
    ["rpm/v1/gw/297056120BD7/up/", "has an empty level"],
    ["rpm/v1/gw//up", "has an empty level"],
    ["$SYS/broker/uptime", "reserved to the broker"],
  ])("names why topic %j is refused", (topic, why) => {
    expect(topicRefused(topic)).toContain(why);
  });

  it("accepts topics whose levels all have text", () => {
    expect(topicRefused("rpm/v1/gw/297056120BD7/up")).toBeNull();
    expect(topicRefused("a")).toBeNull();
  });

  it("refuses topics with an empty level, which aedes 1.2 cannot queue for persistent sessions", async () => {
    const broker = await started("embedded:0");
    try {
      const inbox = new Inbox();
      const sub = await connectClient(broker.url, {
        clientId: "persistent",
        prepare: (c) => inbox.watch(c),
      });
      await sub.subscribeAsync("rpm/v1/gw/+/up", { qos: 1 });
      const pub = await connectClient(broker.url, {
        clientId: "pub",
        clean: true,
        reconnectPeriod: 0,
      });
      const dropped = new Promise<void>((resolve) => pub.once("close", () => resolve()));
      pub.publish("rpm/v1/gw//up", "empty level", { qos: 1 });
      await within(dropped, "the publisher to be dropped");
      const next = await connectClient(broker.url, { clientId: "pub2", clean: true });
      await next.publishAsync("rpm/v1/gw/297056120BD7/up", "valid", { qos: 1 });
      await inbox.count(1, "the valid message");
      expect(inbox.messages.map((m) => m.payload.toString())).toEqual(["valid"]);
      expect(sub.connected).toBe(true);
      await Promise.all([sub.endAsync(), pub.endAsync(true), next.endAsync()]);
    } finally {
      await broker.stop();
    }
  });
});
