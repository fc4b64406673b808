/**
 * The modem on a real Mosquitto (DESIGN.md "Testing": every boundary on each implementation):
 * what it queued during an outage arrives after it, oldest first; its last will is retained;
 * the downlink sent while it was away arrives when it is back (persistent session).
 */
import type { MqttClient } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { Modem } from "../../src/cellular/modem.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { Clients, hexId, Inbox, within } from "../mqtt/helpers.ts";
import { mosquittoOrSkip } from "../support/mosquitto.ts";

type Item = { n: number };
const url = await mosquittoOrSkip("Modem on Mosquitto");

if (url !== undefined)
  describe(`Modem on Mosquitto (${url})`, () => {
    const clients = new Clients();
    const stops: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
      await clients.endAll();
    });

    it("sends after an outage, oldest first; the will is retained; queued downlink arrives on return", async () => {
      const gateway = hexId(12);
      const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
      const status = topicOf("gw/status", gateway);
      const up = topicOf("gw/up", gateway);
      const down = topicOf("gw/down", gateway);
      const modem = await Modem.open<Item>({
        clock,
        rng: new Rng(gateway),
        link: { profile: STEADY_LINK_PROFILE },
        broker: {
          url,
          clientId: gateway,
          will: { topic: status, payload: { v: 1, online: false }, retain: true },
          subscriptions: [down],
        },
        outbox: { capacity: 100, name: gateway },
        maxBatch: 2,
        envelope: (batch) => ({
          topic: up,
          payload: { id: batch.messageId, items: batch.entries.map((e) => e.item.n) },
        }),
      });
      stops.push(async () => {
        // A persistent session outlives its client on Mosquitto; a clean connect ends it
        // ([MQTT-3.1.2-6]).
        const ender = await connectClient(url, { clientId: gateway, clean: true });
        await ender.endAsync();
      });
      stops.push(() => modem.stop());
      const watcher: MqttClient = clients.add(
        await connectClient(url, { clientId: `watch-${gateway}`, clean: true }),
      );
      const inbox = new Inbox(watcher);
      await watcher.subscribeAsync([up, status], { qos: 1 });
      stops.push(async () => {
        // Mosquitto keeps retained messages: leave none of this run behind.
        await watcher.publishAsync(status, "", { qos: 1, retain: true });
      });

      await modem.start();
      modem.link.outage();
      for (let n = 0; n < 3; n++) modem.send({ n });
      await inbox.until((m) => m.some((x) => x.topic === status), "the last will on Mosquitto");
      expect(JSON.parse(inbox.onTopic(status)[0]!.payload.toString())).toEqual({
        v: 1,
        online: false,
      });
      expect(inbox.onTopic(up)).toHaveLength(0);
      await watcher.publishAsync(
        down,
        JSON.stringify({ v: 1, type: "time", now: "2026-01-01T00:00:00Z" }),
        {
          qos: 1,
        },
      );

      const downlink = new Promise<Buffer>((resolve) =>
        modem.session.events.once("message", (m) => resolve(m.payload)),
      );
      modem.link.restore();
      await modem.session.settled();
      expect(JSON.parse((await within(downlink, "the queued downlink")).toString())).toMatchObject({
        type: "time",
      });
      for (let k = 1; k <= 2; k++) {
        await clock.run({ until: clock.now() + 1000 });
        await inbox.until((m) => m.filter((x) => x.topic === up).length >= k, `uplink ${k}`);
        await modem.drainer.settled();
      }
      const sent = inbox
        .onTopic(up)
        .map((m) => JSON.parse(m.payload.toString()) as { items: number[] });
      expect(sent.map((s) => s.items)).toEqual([[0, 1], [2]]);
      expect(modem.outbox.size).toBe(0);
    });
  });
