import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/core/logger.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import {
  clientIdDenied,
  type MqttIdentity,
  publishDenied,
  subscribeDenied,
} from "../../src/mqtt/acl.ts";
import { type Broker, createBroker } from "../../src/mqtt/broker.ts";
import { connectClient, subscribeAll } from "../../src/mqtt/client.ts";
import { issueCredentials, storeAuth } from "../../src/mqtt/credentials.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import { Clients, Inbox, killConnection, within } from "./helpers.ts";

const GW_A = "297056120BD7";
const GW_B = "FED091A643FF";
const IMEI = "356938035643809";
const gwA: MqttIdentity = { username: GW_A, role: "gateway" };
const cell: MqttIdentity = { username: IMEI, role: "cellular" };
const ingest: MqttIdentity = { username: "rpmlab-ingest", role: "service" };

describe("ACL rules (issue 4)", () => {
  it("lets a gateway publish only its own up and status, and subscribe only its own down", () => {
    expect(publishDenied(gwA, `rpm/v1/gw/${GW_A}/up`)).toBeNull();
    expect(publishDenied(gwA, `rpm/v1/gw/${GW_A}/status`)).toBeNull();
    expect(publishDenied(gwA, `rpm/v1/gw/${GW_A}/down`)).toMatch(/may not publish/);
    expect(publishDenied(gwA, `rpm/v1/gw/${GW_B}/up`)).toMatch(/may not publish/);
    expect(publishDenied(gwA, `rpm/v1/cell/${IMEI}/up`)).toMatch(/may not publish/);
    expect(publishDenied(gwA, "$SYS/anything")).not.toBeNull();
    expect(subscribeDenied(gwA, `rpm/v1/gw/${GW_A}/down`)).toBeNull();
    for (const filter of [
      `rpm/v1/gw/${GW_B}/down`,
      "rpm/v1/gw/+/down",
      "#",
      `rpm/v1/gw/${GW_A}/up`,
    ]) {
      expect(subscribeDenied(gwA, filter)).toMatch(/may not subscribe/);
    }
  });

  it("lets an IMEI publish only its own cell topic, and subscribe to nothing", () => {
    expect(publishDenied(cell, `rpm/v1/cell/${IMEI}/up`)).toBeNull();
    expect(publishDenied(cell, "rpm/v1/cell/356938035643800/up")).not.toBeNull();
    expect(publishDenied(cell, `rpm/v1/gw/${GW_A}/up`)).not.toBeNull();
    expect(subscribeDenied(cell, `rpm/v1/cell/${IMEI}/up`)).not.toBeNull();
  });

  it("lets a lab service read every device topic (shared or not) and write only downlinks", () => {
    for (const filter of ["rpm/v1/gw/+/up", "$share/rpmlab-ingest/rpm/v1/cell/+/up", "rpm/v1/#"]) {
      expect(subscribeDenied(ingest, filter)).toBeNull();
    }
    expect(subscribeDenied(ingest, "#")).not.toBeNull();
    expect(subscribeDenied(ingest, "$share/g/#")).not.toBeNull();
    expect(publishDenied(ingest, `rpm/v1/gw/${GW_A}/down`)).toBeNull();
    expect(publishDenied(ingest, `rpm/v1/gw/${GW_A}/up`)).not.toBeNull();
    expect(publishDenied(ingest, "elsewhere")).not.toBeNull();
  });

  it("ties a device's client id to its username, so no device takes another's session", () => {
    expect(clientIdDenied(gwA, GW_A)).toBeNull();
    expect(clientIdDenied(gwA, `${GW_A}-2`)).toBeNull();
    expect(clientIdDenied(gwA, GW_B)).not.toBeNull();
    expect(clientIdDenied(gwA, `${GW_A}X`)).not.toBeNull();
    expect(clientIdDenied(ingest, "rpmlab-ingest-1")).toBeNull();
  });
});

describe("embedded broker with the lab's credentials and ACL", () => {
  let store: Store;
  let broker: Broker;
  const clients = new Clients();
  const passwords: Record<string, string> = {};
  /** The broker's warnings, parsed. */
  const logged: Record<string, unknown>[] = [];

  beforeEach(async () => {
    store = await openStore("memory", {
      clock: new VirtualClock({ startMs: 0 }),
      rng: new Rng("acl"),
    });
    for (const [role, username] of [
      ["gateway", GW_A],
      ["gateway", GW_B],
      ["cellular", IMEI],
      ["service", "rpmlab-ingest"],
    ] as const) {
      passwords[username] = (
        await issueCredentials(store.mqttCredentials, role, username)
      ).password;
    }
    logged.length = 0;
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logged.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    });
    broker = createBroker("embedded:0", {
      auth: storeAuth(store.mqttCredentials),
      logger: createLogger({ level: "warn", destination }),
    });
    await broker.start();
  });

  afterEach(async () => {
    await clients.endAll();
    await broker.stop();
    await store.close();
  });

  const as = async (username: string, clientId = username) =>
    clients.add(
      await connectClient(broker.url, {
        clientId,
        username,
        password: passwords[username]!,
        clean: true,
        reconnectPeriod: 0,
      }),
    );

  it("refuses wrong passwords, unknown users, anonymous clients and borrowed client ids", async () => {
    const attempt = (options: { username?: string; password?: string; clientId: string }) =>
      connectClient(broker.url, { ...options, clean: true, reconnectPeriod: 0 });
    await expect(
      attempt({ clientId: GW_A, username: GW_A, password: "wrong" }),
    ).rejects.toMatchObject({
      code: "E_BROKER_REFUSED",
      details: { returnCode: 4 },
    });
    await expect(
      attempt({ clientId: "x", username: "nobody", password: "x" }),
    ).rejects.toMatchObject({ code: "E_BROKER_REFUSED", details: { returnCode: 4 } });
    await expect(attempt({ clientId: "anonymous" })).rejects.toMatchObject({
      code: "E_BROKER_REFUSED",
      details: { returnCode: 5 },
    });
    await expect(
      attempt({ clientId: GW_B, username: GW_A, password: passwords[GW_A]! }),
    ).rejects.toMatchObject({ code: "E_BROKER_REFUSED", details: { returnCode: 2 } });
    // A rotated password ends the old one.
    const old = passwords[GW_A]!;
    passwords[GW_A] = (await issueCredentials(store.mqttCredentials, "gateway", GW_A)).password;
    await expect(attempt({ clientId: GW_A, username: GW_A, password: old })).rejects.toMatchObject({
      code: "E_BROKER_REFUSED",
    });
    expect(await as(GW_A)).toBeDefined();
  });

  it("drops a gateway that publishes under another gateway's topic, and delivers its own", async () => {
    const service = await as("rpmlab-ingest");
    const inbox = new Inbox(service);
    await subscribeAll(service, ["rpm/v1/#"]);
    const a = await as(GW_A);
    const closed = new Promise<void>((resolve) => a.once("close", () => resolve()));
    // [MQTT-3.3.5-2] 3.1.1 cannot refuse a PUBLISH: the broker closes the connection.
    a.publish(topicOf("gw/up", GW_B), "forged", { qos: 1 });
    await within(closed, "the broker to drop the forger");
    // The serve's log says who was refused, where, and why.
    expect(logged).toContainEqual(
      expect.objectContaining({
        msg: "publication refused: connection closed",
        client: GW_A,
        topic: topicOf("gw/up", GW_B),
        reason: expect.stringContaining(GW_A),
      }),
    );
    const b = await as(GW_B);
    await b.publishAsync(topicOf("gw/up", GW_B), "genuine", { qos: 1 });
    await inbox.count(1, "the genuine publication");
    expect(inbox.messages.map((m) => m.payload.toString())).toEqual(["genuine"]);
    const phone = await as(IMEI);
    await phone.publishAsync(topicOf("cell/up", IMEI), "cellular", { qos: 1 });
    await inbox.count(2, "the cellular publication");
  });

  it("grants a gateway its own downlink and refuses the others (SUBACK 0x80)", async () => {
    const a = await as(GW_A);
    await subscribeAll(a, [topicOf("gw/down", GW_A)]);
    await expect(subscribeAll(a, [topicOf("gw/down", GW_B)])).rejects.toMatchObject({
      code: "E_BROKER_REFUSED",
    });
    await expect(subscribeAll(a, ["rpm/v1/gw/+/up"])).rejects.toMatchObject({
      code: "E_BROKER_REFUSED",
    });
    const inbox = new Inbox(a);
    const lab = await as("rpmlab-ingest", "rpmlab-downlink");
    await lab.publishAsync(topicOf("gw/down", GW_A), '{"v":1,"type":"time"}', { qos: 1 });
    await inbox.count(1, "the downlink");
  });

  it("publishes a gateway's last will on its own status topic only", async () => {
    const service = await as("rpmlab-ingest");
    const inbox = new Inbox(service);
    await subscribeAll(service, ["rpm/v1/gw/+/status"]);
    const will = (gateway: string) => ({
      topic: topicOf("gw/status", gateway),
      payload: Buffer.from('{"v":1,"online":false}'),
      qos: 1 as const,
      retain: false,
    });
    const honest = await connectClient(broker.url, {
      clientId: GW_A,
      username: GW_A,
      password: passwords[GW_A]!,
      clean: true,
      reconnectPeriod: 0,
      will: will(GW_A),
    });
    const liar = await connectClient(broker.url, {
      clientId: GW_B,
      username: GW_B,
      password: passwords[GW_B]!,
      clean: true,
      reconnectPeriod: 0,
      will: will(GW_A),
    });
    await killConnection(liar);
    await killConnection(honest);
    await inbox.count(1, "the honest will");
    // Barrier: a status published after both deaths arrives after any will that was let through.
    const b = await as(GW_B);
    await b.publishAsync(topicOf("gw/status", GW_B), "barrier", { qos: 1 });
    await inbox.count(2, "the barrier");
    expect(inbox.messages.map((m) => m.topic)).toEqual([
      topicOf("gw/status", GW_A),
      topicOf("gw/status", GW_B),
    ]);
    await Promise.all([honest.endAsync(true), liar.endAsync(true)]);
  });
});
