import { Socket } from "node:net";
import { connect } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { type Broker, createBroker } from "../../src/mqtt/broker.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { duplexPair } from "../../src/mqtt/in-process.ts";
import { Inbox, within } from "./helpers.ts";

/**
 * Clients of this process reach its embedded broker over in-memory streams (in-process.ts);
 * to them and to clients on TCP it is the same broker, with the same connection semantics.
 */
describe("a client of the embedded broker in its own process", () => {
  let broker: Broker;
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  const start = async () => {
    broker = createBroker("embedded:0");
    await broker.start();
    closers.push(() => broker.stop());
  };

  it("talks to clients on TCP through the one broker, both ways", async () => {
    await start();
    const local = await connectClient(broker.url, { clientId: "local", clean: true });
    closers.push(() => local.endAsync(true));
    const remote = connect(broker.url, { clientId: "remote", protocolVersion: 4, clean: true });
    closers.push(() => remote.endAsync(true));
    await within(new Promise((resolve) => remote.once("connect", resolve)), "a TCP CONNACK");
    expect(local.stream).not.toBeInstanceOf(Socket);
    expect(remote.stream).toBeInstanceOf(Socket);
    const localInbox = new Inbox(local);
    const remoteInbox = new Inbox(remote);
    await local.subscribeAsync("lab/to-local", { qos: 1 });
    await remote.subscribeAsync("lab/to-remote", { qos: 1 });
    await local.publishAsync("lab/to-remote", "from local", { qos: 1 });
    await remote.publishAsync("lab/to-local", "from remote", { qos: 1 });
    await localInbox.count(1, "the TCP client's message");
    await remoteInbox.count(1, "the in-process client's message");
    expect(localInbox.messages[0]!.payload.toString()).toBe("from remote");
    expect(remoteInbox.messages[0]!.payload.toString()).toBe("from local");
  });

  it("leaves other schemes to MQTT.js: mqtts:// at the broker's address fails its TLS handshake", async () => {
    await start();
    const tls = broker.url.replace(/^mqtt:/, "mqtts:");
    await expect(
      connectClient(tls, { clientId: "tls", clean: true, reconnectPeriod: 0 }),
    ).rejects.toMatchObject({ code: "E_BROKER_UNAVAILABLE" });
  });

  it("loses its connection without DISCONNECT as a socket would: the broker publishes its will", async () => {
    await start();
    const watcher = await connectClient(broker.url, { clientId: "watcher", clean: true });
    closers.push(() => watcher.endAsync(true));
    const inbox = new Inbox(watcher);
    await watcher.subscribeAsync("lab/status/+", { qos: 1 });
    const gateway = await connectClient(broker.url, {
      clientId: "gw",
      clean: true,
      reconnectPeriod: 0,
      will: { topic: "lab/status/gw", payload: Buffer.from("offline"), qos: 1, retain: false },
    });
    closers.push(() => gateway.endAsync(true));
    gateway.stream.destroy();
    await inbox.count(1, "the will");
    expect(inbox.messages[0]!.payload.toString()).toBe("offline");
  });

  it("is refused while the broker is stopped, and reconnects by itself once it is back", async () => {
    await start();
    const url = broker.url;
    const client = await connectClient(url, { clientId: "persistent", reconnectPeriod: 20 });
    closers.push(() => client.endAsync(true));
    const reconnected = new Promise<void>((resolve) => client.once("reconnect", () => resolve()));
    await broker.stop();
    await expect(
      connectClient(url, { clientId: "late", clean: true, reconnectPeriod: 0 }),
    ).rejects.toMatchObject({ code: "E_BROKER_UNAVAILABLE", message: /ECONNREFUSED/ });
    await within(reconnected, "a reconnection attempt");
    // Started again on the same port: the client's next attempt gets in.
    await broker.start();
    await within(new Promise((resolve) => client.once("connect", resolve)), "the CONNACK");
    expect(client.connected).toBe(true);
  });
});

describe("duplexPair", () => {
  it("carries bytes on a later tick; ending one ends the other's reading; destroying one closes both", async () => {
    const [a, b] = duplexPair();
    const read = (side: typeof a) =>
      new Promise<string>((resolve) => {
        let text = "";
        side.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        side.on("end", () => resolve(text));
      });
    const atB = read(b);
    let during = "";
    b.on("data", (chunk: Buffer) => {
      during += chunk.toString();
    });
    a.write("hello ");
    // Never inside the writer's call, as from a socket.
    expect(during).toBe("");
    a.end("there");
    expect(await within(atB, "b's end")).toBe("hello there");
    const [c, d] = duplexPair();
    const closed = new Promise((resolve) => d.once("close", resolve));
    c.destroy();
    await within(closed, "the other side's close");
    expect(d.destroyed).toBe(true);
  });
});
