/**
 * The modem pieces together against the lab's embedded broker (credentials and ACL on): a link,
 * an outbox, an MQTT session and the drainer. What a subscriber on the broker sees is what the
 * ingestion core would see.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MqttClient } from "mqtt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Drainer } from "../../src/cellular/drain.ts";
import { CellularLink, STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { Modem, sessionsBack } from "../../src/cellular/modem.ts";
import { type Outbox, openOutbox } from "../../src/cellular/outbox.ts";
import { UplinkSession } from "../../src/cellular/uplink-session.ts";
import type { Clock } from "../../src/core/clock.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { issueCredentials } from "../../src/mqtt/credentials.ts";
import { gatewayOfflineSchema } from "../../src/mqtt/envelope.ts";
import { filterOf, topicOf } from "../../src/mqtt/topics.ts";
import type { Store } from "../../src/store/store.ts";
import { memoryStore } from "../ingest/fixtures.ts";
import { IngestLab } from "../ingest/harness.ts";
import { Clients, Inbox, within } from "../mqtt/helpers.ts";

const IMEI = "356938035643809";
const GATEWAY = "A1B2C3D4E5F6";
type Item = { n: number };

/** A TCP relay in front of the broker that can cut a connection after the next PUBLISH. */
class CuttableRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private cutNextPublish = false;
  /** Nothing from the broker reaches the client any more (no PUBACK, no PINGRESP). */
  silent = false;
  url = "";

  async start(target: string): Promise<void> {
    const { hostname, port } = new URL(target);
    this.server = createServer((client) => {
      const upstream = createConnection(Number(port), hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once("close", () => this.sockets.delete(s));
        s.on("error", () => undefined);
      }
      client.on("data", (chunk: Buffer) => {
        upstream.write(chunk);
        // 0x32: PUBLISH at QoS 1 ([MQTT-2.2.1] fixed header). The broker gets it; the PUBACK
        // never reaches the client.
        if (this.cutNextPublish && chunk[0] === 0x32) {
          this.cutNextPublish = false;
          client.destroy();
          upstream.end();
        }
      });
      upstream.on("data", (chunk: Buffer) => {
        if (!this.silent) client.write(chunk);
      });
      client.once("close", () => upstream.destroy());
      upstream.once("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const address = this.server.address() as { port: number };
    this.url = `mqtt://127.0.0.1:${address.port}`;
  }

  cutAfterNextPublish(): void {
    this.cutNextPublish = true;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

describe("modem: link, outbox, session and drainer on the embedded broker", () => {
  let store: Store;
  let clock: VirtualClock;
  let lab: IngestLab;
  const clients = new Clients();
  const stops: (() => Promise<void> | void)[] = [];

  beforeEach(async () => {
    ({ store, clock } = await memoryStore());
    lab = new IngestLab(store, clock);
    await lab.start();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    await clients.endAll();
    await lab.stop();
    await store.close();
  });

  /** A lab service client that watches a filter, as the ingestion core would. */
  async function watch(filter: string): Promise<Inbox> {
    const { username, password } = await issueCredentials(
      store.mqttCredentials,
      "service",
      `watch-${Math.floor(clock.now() % 1e6)}-${stops.length}`,
    );
    const inbox = new Inbox();
    const client: MqttClient = clients.add(
      await connectClient(lab.broker.url, {
        clientId: username,
        username,
        password,
        clean: true,
        prepare: (c) => inbox.watch(c),
      }),
    );
    await client.subscribeAsync(filter, { qos: 1 });
    return inbox;
  }

  async function modem(
    options: {
      url?: string;
      imei?: string;
      password?: string;
      capacity?: number;
      keepTrying?: boolean;
    } = {},
  ) {
    const imei = options.imei ?? IMEI;
    const password =
      options.password ??
      (await issueCredentials(store.mqttCredentials, "cellular", imei)).password;
    const link = new CellularLink({ clock, rng: new Rng("link"), profile: STEADY_LINK_PROFILE });
    const outbox: Outbox<Item> = await openOutbox<Item>({
      clock,
      rng: new Rng("outbox"),
      capacity: options.capacity ?? 50,
      name: imei,
    });
    const session = new UplinkSession({
      url: options.url ?? lab.broker.url,
      clientId: imei,
      username: imei,
      password,
      link,
      clock,
      ...(options.keepTrying === undefined ? {} : { keepTrying: options.keepTrying }),
    });
    const drainer = new Drainer<Item>({
      outbox,
      link,
      session,
      clock,
      maxBatch: 3,
      envelope: (batch, sentAt) => ({
        topic: topicOf("cell/up", imei),
        payload: { id: batch.messageId, sentAt, items: batch.entries.map((e) => e.item.n) },
      }),
    });
    stops.push(
      () => link.stop(),
      () => session.stop(),
      () => drainer.stop(),
    );
    return { link, outbox, session, drainer };
  }

  const received = (inbox: Inbox) =>
    inbox.messages.map((m) => JSON.parse(m.payload.toString()) as { id: string; items: number[] });

  /** Steps the Clock past the modem's latency, then waits for the broker to see `n` messages. */
  async function deliver(inbox: Inbox, n: number): Promise<void> {
    await clock.run({ until: clock.now() + 1000 });
    await inbox.count(n);
  }

  it("sends the backlog oldest first in batches, each message acknowledged before it leaves the outbox", async () => {
    const inbox = await watch(filterOf("cell/up"));
    const m = await modem();
    for (let n = 0; n < 7; n++) m.outbox.enqueue({ n });
    m.link.start();
    await m.session.start();
    m.drainer.start();
    for (let k = 1; k <= 3; k++) await deliver(inbox, k);
    await m.drainer.settled();
    expect(received(inbox).map((r) => r.items)).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    expect(m.outbox.size).toBe(0);
    expect(m.drainer.counts).toEqual({ messages: 3, items: 7, failures: 0, resent: 0 });
  });

  it("sends nothing during an outage, and the readings queued meanwhile right after it", async () => {
    const inbox = await watch(filterOf("cell/up"));
    const m = await modem();
    m.link.start();
    await m.session.start();
    m.drainer.start();
    m.outbox.enqueue({ n: 0 });
    m.drainer.kick();
    await deliver(inbox, 1);
    m.link.outage(3_600_000);
    expect(m.session.connected).toBe(false);
    for (let n = 1; n <= 4; n++) {
      m.outbox.enqueue({ n });
      m.drainer.kick();
    }
    await clock.run({ until: clock.now() + 3_000_000 });
    expect(inbox.messages).toHaveLength(1);
    await expect(m.session.publish(topicOf("cell/up", IMEI), {})).rejects.toSatisfy((e) =>
      isRpmlabError(e, "E_CELLULAR_OFFLINE"),
    );
    // The outage ends: the modem reconnects (real I/O), then the drainer sends.
    await clock.run({ until: clock.now() + 600_000 });
    expect(m.link.up).toBe(true);
    await m.session.settled();
    expect(m.session.connected).toBe(true);
    await deliver(inbox, 2);
    await deliver(inbox, 3);
    expect(received(inbox).map((r) => r.items)).toEqual([[0], [1, 2, 3], [4]]);
    expect(m.outbox.size).toBe(0);
  });

  it("powered on while the broker is down (keepTrying: a scenario's kit delivered in a broker outage), it starts, queues, and sends once the broker is back", async () => {
    const m = await modem({ keepTrying: true });
    await lab.broker.stop();
    m.link.start();
    // It rejected with E_BROKER_UNAVAILABLE, and the scenario run ended there.
    await m.session.start();
    m.drainer.start();
    m.outbox.enqueue({ n: 0 });
    m.drainer.kick();
    await clock.run({ until: clock.now() + 60_000 });
    expect(m.session.connected).toBe(false);
    await lab.broker.start();
    // The lab knows its broker is back: the session tries now, not at its next retry.
    await sessionsBack([m], 10_000);
    expect(m.session.connected).toBe(true);
    const inbox = await watch(filterOf("cell/up"));
    await deliver(inbox, 1);
    expect(received(inbox).map((r) => r.items)).toEqual([[0]]);
  });

  it("a broker down for hours is tried again less and less often, not every 30 s of Clock time", async () => {
    const { password } = await issueCredentials(store.mqttCredentials, "cellular", IMEI);
    const link = new CellularLink({ clock, rng: new Rng("link"), profile: STEADY_LINK_PROFILE });
    // The session's own timers are its retries: counted through the clock it is given.
    let retries = 0;
    const counting: Clock = {
      now: () => clock.now(),
      setTimeout: (fn, ms) => {
        retries++;
        return clock.setTimeout(fn, ms);
      },
      clearTimeout: (handle) => clock.clearTimeout(handle),
      sleep: (ms) => clock.sleep(ms),
    };
    const session = new UplinkSession({
      url: lab.broker.url,
      clientId: IMEI,
      username: IMEI,
      password,
      link,
      clock: counting,
      keepTrying: true,
    });
    stops.push(
      () => link.stop(),
      () => session.stop(),
    );
    await lab.broker.stop();
    link.start();
    await session.start();
    for (let step = 0; step < 6 * 120; step++) {
      await clock.run({ until: clock.now() + 30_000 });
      await session.settled();
    }
    expect(session.connected).toBe(false);
    // Every 30 s was 720 refused connections in six hours, a long outage's wall time.
    expect(retries).toBeGreaterThan(5);
    expect(retries).toBeLessThan(40);
    await lab.broker.start();
  });

  it("without keepTrying, a broker down at power-on still fails start() (rpmlab device, rpmlab gateway)", async () => {
    const m = await modem();
    await lab.broker.stop();
    m.link.start();
    await expect(m.session.start()).rejects.toSatisfy((e) =>
      isRpmlabError(e, "E_BROKER_UNAVAILABLE"),
    );
    await lab.broker.start();
  });

  /**
   * A modem behind a relay whose first publication of items 0 and 1 loses its PUBACK with the
   * connection: returned once the drainer has counted it failed.
   */
  async function failedFirstPublication(options: { capacity?: number } = {}) {
    const relay = new CuttableRelay();
    await relay.start(lab.broker.url);
    stops.push(() => relay.stop());
    const inbox = await watch(filterOf("cell/up"));
    const m = await modem({ url: relay.url, ...options });
    for (let n = 0; n < 2; n++) m.outbox.enqueue({ n });
    m.link.start();
    await m.session.start();
    const failed = new Promise<void>((resolve) => m.drainer.events.once("failed", () => resolve()));
    relay.cutAfterNextPublish();
    m.drainer.start();
    await clock.run({ until: clock.now() + 1000 });
    await within(failed, "the failed publication");
    return { m, inbox };
  }

  /** MQTT.js reconnects by itself (the link stayed up); then the drainer's next send. */
  async function reconnectedAndSent(m: Awaited<ReturnType<typeof modem>>, what: string) {
    const sent = new Promise<void>((resolve) => m.drainer.events.once("sent", () => resolve()));
    await within(
      new Promise<void>((resolve) => m.session.events.once("connected", () => resolve())),
      "MQTT.js to reconnect",
    );
    await clock.run({ until: clock.now() + 1000 });
    await within(sent, what);
  }

  it("a PUBACK lost with the connection: the batch stays queued and goes again with the same message id", async () => {
    const { m, inbox } = await failedFirstPublication();
    expect(m.outbox.size).toBe(2);
    await reconnectedAndSent(m, "the re-sent batch");
    expect(m.outbox.size).toBe(0);
    const ids = new Set(received(inbox).map((r) => r.id));
    // The broker saw the first attempt (the cut came after it) and the re-send: one id.
    expect(ids.size).toBe(1);
    expect(received(inbox).every((r) => r.items.join() === "0,1")).toBe(true);
    expect(m.drainer.counts).toMatchObject({ messages: 1, items: 2, failures: 1, resent: 1 });
  });

  it("a batch waiting to be sent again that a full outbox dropped: the next one goes out instead", async () => {
    const { m, inbox } = await failedFirstPublication({ capacity: 3 });
    // Three more readings while it reconnects: the full outbox drops 0 and 1, the failed batch.
    for (let n = 2; n < 5; n++) m.outbox.enqueue({ n });
    expect(m.outbox.dropped).toBe(2);
    await reconnectedAndSent(m, "the next batch");
    expect(received(inbox).at(-1)!.items).toEqual([2, 3, 4]);
    expect(m.outbox.size).toBe(0);
  });

  it("Modem.stop() does not wait for a PUBACK that never comes; the message stays queued", async () => {
    const relay = new CuttableRelay();
    await relay.start(lab.broker.url);
    stops.push(() => relay.stop());
    const { password } = await issueCredentials(store.mqttCredentials, "cellular", IMEI);
    const m = await Modem.open<Item>({
      clock,
      rng: new Rng("stop"),
      link: { profile: STEADY_LINK_PROFILE },
      broker: { url: relay.url, clientId: IMEI, username: IMEI, password },
      outbox: { capacity: 10, name: IMEI },
      envelope: (batch) => ({ topic: topicOf("cell/up", IMEI), payload: { id: batch.messageId } }),
    });
    await m.start();
    relay.silent = true;
    const failed = new Promise<void>((resolve) => m.drainer.events.once("failed", () => resolve()));
    m.send({ n: 0 });
    await clock.run({ until: clock.now() + 1000 });
    await within(m.stop(), "the modem to stop");
    await within(failed, "the unacknowledged publication to fail");
    expect(m.outbox.size).toBe(1);
  });

  it("stop() while the broker has not answered CONNECT gives the attempt up at once", async () => {
    const relay = new CuttableRelay();
    await relay.start(lab.broker.url);
    stops.push(() => relay.stop());
    // The CONNACK never reaches the modem: MQTT.js would wait 10 s for it.
    relay.silent = true;
    const m = await modem({ url: relay.url });
    m.link.start();
    const started = m.session.start().catch((e: unknown) => e);
    await within(m.session.stop(), "the session to stop", 3_000);
    const error = await within(started, "start() to give up", 3_000);
    expect(isRpmlabError(error, "E_CELLULAR_OFFLINE")).toBe(true);
    expect(m.session.connected).toBe(false);
  });

  it("a gateway's last will (retained offline status) is published when its link goes down", async () => {
    const { password } = await issueCredentials(store.mqttCredentials, "gateway", GATEWAY);
    const link = new CellularLink({ clock, rng: new Rng("gw"), profile: STEADY_LINK_PROFILE });
    const status = topicOf("gw/status", GATEWAY);
    const session = new UplinkSession({
      url: lab.broker.url,
      clientId: GATEWAY,
      username: GATEWAY,
      password,
      link,
      clock,
      will: { topic: status, payload: { v: 1, online: false }, retain: true },
      subscriptions: [topicOf("gw/down", GATEWAY)],
    });
    stops.push(
      () => link.stop(),
      () => session.stop(),
    );
    link.start();
    await session.start();
    const downlink = new Promise<Buffer>((resolve) =>
      session.events.once("message", (m) => resolve(m.payload)),
    );
    link.coverageHole();
    expect(session.connected).toBe(false);
    // Retained: a subscriber that comes later still reads the gateway as offline.
    const inbox = await watch(filterOf("gw/status"));
    await inbox.count(1, "the retained last will");
    const will = inbox.messages[0]!;
    expect(will.topic).toBe(status);
    expect(will.packet.retain).toBe(true);
    expect(gatewayOfflineSchema.parse(JSON.parse(will.payload.toString()))).toEqual({
      v: 1,
      online: false,
    });
    // The persistent session keeps the downlink sent while the gateway was away.
    const lab2 = clients.add(
      await connectClient(lab.broker.url, {
        clientId: "rpmlab-down",
        ...(await issueCredentials(store.mqttCredentials, "service", "rpmlab-down")),
        clean: true,
      }),
    );
    await lab2.publishAsync(
      topicOf("gw/down", GATEWAY),
      JSON.stringify({ v: 1, type: "time", now: "2026-01-01T00:00:00Z" }),
      { qos: 1 },
    );
    link.restore();
    const payload = await within(downlink, "the queued downlink after reconnecting");
    expect(JSON.parse(payload.toString())).toEqual({
      v: 1,
      type: "time",
      now: "2026-01-01T00:00:00Z",
    });
  });

  it("Modem: readings queued during an outage survive a restart on disk and go out after it, oldest first", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-modem-"));
    stops.push(() => rmSync(dir, { recursive: true, force: true }));
    const { password } = await issueCredentials(store.mqttCredentials, "cellular", IMEI);
    const inbox = await watch(filterOf("cell/up"));
    const open = () =>
      Modem.open<Item>({
        clock,
        rng: new Rng("modem"),
        identity: { imei: IMEI },
        link: { profile: STEADY_LINK_PROFILE },
        broker: { url: lab.broker.url, clientId: IMEI, username: IMEI, password },
        outbox: { capacity: 100, dir, name: IMEI },
        envelope: (batch) => ({
          topic: topicOf("cell/up", IMEI),
          payload: { id: batch.messageId, items: batch.entries.map((e) => e.item.n) },
        }),
      });
    const first = await open();
    expect(first.identity.imei).toBe(IMEI);
    await first.start();
    first.link.outage();
    for (let n = 0; n < 5; n++) first.send({ n });
    await clock.run({ until: clock.now() + 60_000 });
    await first.stop();
    expect(inbox.messages).toHaveLength(0);
    const second = await open();
    stops.push(() => second.stop());
    expect(second.identity).toEqual(first.identity);
    expect(second.outbox.size).toBe(5);
    await second.start();
    await deliver(inbox, 1);
    expect(received(inbox).map((r) => r.items)).toEqual([[0, 1, 2, 3, 4]]);
    await second.drainer.settled();
    expect(second.outbox.size).toBe(0);
  });

  it("a reconnection the broker refuses after it dropped the session is reported, not silent", async () => {
    const m = await modem();
    m.link.start();
    await m.session.start();
    const failures: Error[] = [];
    const failed = new Promise<void>((resolve) =>
      m.session.events.on("connectFailed", (error) => {
        failures.push(error);
        resolve();
      }),
    );
    // Another issue of the IMEI's credentials rotates its password, and a client of the same id
    // takes the session over: the broker drops the modem, whose own reconnection is refused.
    const { password } = await issueCredentials(store.mqttCredentials, "cellular", IMEI);
    clients.add(
      await connectClient(lab.broker.url, {
        clientId: IMEI,
        username: IMEI,
        password,
        clean: true,
      }),
    );
    await within(failed, "the refused reconnection");
    expect(isRpmlabError(failures[0], "E_BROKER_REFUSED")).toBe(true);
    expect(failures[0]!.message).toContain(`refused client ${IMEI}`);
  });

  it("start() rejects with E_BROKER_REFUSED on wrong credentials and leaves nothing running", async () => {
    await issueCredentials(store.mqttCredentials, "cellular", IMEI);
    const m = await modem({ password: "wrong" });
    m.link.start();
    const error = await m.session.start().catch((e: unknown) => e);
    expect(isRpmlabError(error, "E_BROKER_REFUSED")).toBe(true);
    expect(m.session.connected).toBe(false);
  });
});
