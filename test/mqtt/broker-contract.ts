import type { MqttClient } from "mqtt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Broker } from "../../src/mqtt/broker.ts";
import { connectClient, type LabClientOptions } from "../../src/mqtt/client.ts";
import { TOPIC_QOS, topicOf } from "../../src/mqtt/topics.ts";
import { Clients, hexId, Inbox, killConnection, within } from "./helpers.ts";

export interface BrokerHarness {
  /** A started broker, open to anonymous clients. */
  open(): Promise<Broker>;
}

/**
 * The one contract every broker the lab uses passes (DESIGN.md "Testing"; like MQTT.js's
 * abstract_store): embedded aedes and a real Mosquitto. Topics and client ids are new per test,
 * since an external broker keeps sessions and retained messages between runs.
 */
export function brokerContract(name: string, harness: BrokerHarness): void {
  describe(`Broker contract: ${name}`, () => {
    let broker: Broker;
    const clients = new Clients();
    /** Sessions and retained topics to clear afterwards on a persistent broker. */
    const sessions: string[] = [];
    const retained: string[] = [];

    const client = async (options: Partial<LabClientOptions> & { clientId?: string } = {}) => {
      const clientId = options.clientId ?? `rpmlab-test-${hexId(10)}`;
      if (options.clean !== true) sessions.push(clientId);
      return clients.add(await connectClient(broker.url, { ...options, clientId }));
    };

    beforeEach(async () => {
      broker = await harness.open();
    });

    afterEach(async () => {
      await clients.endAll();
      // Leave nothing behind on an external broker: clean sessions, empty retained topics.
      for (const clientId of sessions.splice(0)) {
        const c = await connectClient(broker.url, { clientId, clean: true });
        await c.endAsync();
      }
      if (retained.length > 0) {
        const c = await connectClient(broker.url, {
          clientId: `rpmlab-test-${hexId(10)}`,
          clean: true,
        });
        for (const topic of retained.splice(0)) {
          await c.publishAsync(topic, Buffer.alloc(0), { qos: 1, retain: true });
        }
        await c.endAsync();
      }
      await broker.stop();
    });

    it("delivers a QoS 1 publication byte for byte to a subscriber", async () => {
      const topic = topicOf("gw/up", hexId(12));
      const sub = await client();
      const inbox = new Inbox(sub);
      await sub.subscribeAsync(topic, { qos: 1 });
      const pub = await client({ clean: true });
      const payload = Buffer.from([0x7b, 0x00, 0xff, 0x7d]);
      await pub.publishAsync(topic, payload, { qos: TOPIC_QOS });
      await inbox.count(1);
      expect(inbox.messages[0]).toMatchObject({ topic, payload });
      expect(inbox.messages[0]!.packet.qos).toBe(1);
    });

    it("keeps QoS 1 messages for an offline persistent session and redelivers unacknowledged ones, flagged DUP", async () => {
      const topic = topicOf("gw/up", hexId(12));
      const clientId = `rpmlab-test-${hexId(10)}`;
      // A subscriber that takes a message and never acknowledges it, then loses its link.
      let taken = 0;
      const first = await client({
        clientId,
        handleMessage: () => {
          taken++;
        },
      });
      await first.subscribeAsync(topic, { qos: 1 });
      const pub = await client({ clean: true });
      await pub.publishAsync(topic, "unacknowledged", { qos: 1 });
      await within(
        new Promise<void>((resolve) => first.once("message", () => resolve())),
        "the first delivery",
      );
      expect(taken).toBe(1);
      await killConnection(first);
      // While it is away, the broker queues for the session.
      await pub.publishAsync(topic, "while offline", { qos: 1 });
      const inbox = new Inbox();
      await client({ clientId, reconnectPeriod: 0, prepare: (c) => inbox.watch(c) });
      await inbox.count(2, "the redelivery and the queued message");
      // MQTT 3.1.1 §3.3.1.1: DUP is 1 on a re-delivery, 0 on a first delivery.
      const dupOf = Object.fromEntries(
        inbox.messages.map((m) => [m.payload.toString(), m.packet.dup]),
      );
      expect(dupOf).toEqual({ unacknowledged: true, "while offline": false });
    });

    it("keeps a gateway's retained status and publishes its last will when the link dies", async () => {
      const gateway = hexId(12);
      const topic = topicOf("gw/status", gateway);
      retained.push(topic);
      const gw = await client({
        clientId: gateway,
        clean: true,
        will: { topic, payload: Buffer.from('{"v":1,"online":false}'), qos: 1, retain: true },
      });
      await gw.publishAsync(topic, '{"v":1,"online":true}', { qos: 1, retain: true });
      const watcher = await client({ clean: true });
      const seen = new Inbox(watcher);
      await watcher.subscribeAsync(topic, { qos: 1 });
      await seen.count(1, "the retained status");
      expect(seen.messages[0]!.payload.toString()).toBe('{"v":1,"online":true}');
      expect(seen.messages[0]!.packet.retain).toBe(true);
      await killConnection(gw);
      await seen.count(2, "the last will");
      expect(seen.messages[1]!.payload.toString()).toBe('{"v":1,"online":false}');
      // A subscriber arriving later finds the will as the retained status.
      const late = await client({ clean: true });
      const lateInbox = new Inbox(late);
      await late.subscribeAsync(topic, { qos: 1 });
      await lateInbox.count(1, "the retained will");
      expect(lateInbox.messages[0]!.payload.toString()).toBe('{"v":1,"online":false}');
    });

    it("splits a $share subscription between members exactly when it says it has them", async () => {
      const gateway = hexId(12);
      const filter = `$share/rpmlab-test-${hexId(6)}/rpm/v1/gw/+/up`;
      const pub = await client({ clean: true });
      if (!broker.sharedSubscriptions) {
        // aedes 1.x: "$share/…" is a literal filter no topic matches (topics starting with $ are
        // never routed to wildcards), so the ingestion core subscribes plainly there.
        const sub = await client({ clean: true });
        const inbox = new Inbox(sub);
        await sub.subscribeAsync([filter, "rpmlab-test/barrier"], { qos: 1 });
        await pub.publishAsync(topicOf("gw/up", gateway), "x", { qos: 1 });
        // One connection delivers in order: once the barrier arrives, nothing else is coming.
        await pub.publishAsync("rpmlab-test/barrier", "done", { qos: 1 });
        await inbox.count(1, "the barrier");
        expect(inbox.messages.map((m) => m.topic)).toEqual(["rpmlab-test/barrier"]);
        return;
      }
      const members: MqttClient[] = [];
      for (let i = 0; i < 2; i++) members.push(await client({ clean: true }));
      const inbox = new Inbox(...members);
      for (const m of members) await m.subscribeAsync(filter, { qos: 1 });
      const n = 40;
      for (let i = 0; i < n; i++) {
        await pub.publishAsync(topicOf("gw/up", gateway), String(i), { qos: 1 });
      }
      await inbox.count(n, `${n} messages across the group`);
      const all = inbox.messages.map((m) => Number(m.payload.toString()));
      expect(all.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
      // Each member got some: the broker spread the load.
      expect(new Set(inbox.messages.map((m) => m.by)).size).toBe(2);
    });
  });
}
