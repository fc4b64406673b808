/**
 * What the gateway does with its downlink, the test playing the service on a plain broker: the
 * time sets a wrong gateway clock and leaves a right one alone (a late answer included); a
 * payload off the schema is counted and changes nothing; the whitelist is acknowledged once.
 */
import type { MqttClient } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { Rng } from "../../src/core/rng.ts";
import { toIsoMicros } from "../../src/core/time.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { DirectRadio } from "../../src/devices/direct-device.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { type Broker, createBroker } from "../../src/mqtt/broker.ts";
import { connectClient, subscribeAll } from "../../src/mqtt/client.ts";
import { encodePayload, parsePayload } from "../../src/mqtt/payload.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { Inbox } from "../mqtt/helpers.ts";

const catalogue = Catalogue.load();
const GW = "D0D1D2D3D4D5";
const T0 = Date.UTC(2026, 6, 1, 10, 0, 0);
const HOUR = 3_600_000;

describe("the gateway's downlink", () => {
  let broker: Broker;
  let service: MqttClient;
  let gateway: Gateway;

  afterEach(async () => {
    await gateway.stop();
    await service.endAsync();
    await broker.stop();
  });

  async function start(clockOffsetMs: number) {
    const clock = new VirtualClock({ startMs: T0 });
    broker = createBroker("embedded:0");
    await broker.start();
    service = await connectClient(broker.url, { clientId: "service", clean: true });
    const statuses = new Inbox(service);
    await subscribeAll(service, [topicOf("gw/status", GW)]);
    gateway = await Gateway.open({
      clock,
      rng: new Rng("downlink-handling"),
      catalogue,
      gatewayUuid: GW,
      broker: { url: broker.url },
      ble: new DirectBle(new DirectRadio()),
      link: { profile: STEADY_LINK_PROFILE },
      clockOffsetMs,
    });
    await gateway.start();
    await statuses.count(1, "the first check-in");
    await gateway.modem.session.landed();
    const checkin = parsePayload("gw/status", statuses.messages[0]!.payload);
    const send = async (payload: Parameters<typeof encodePayload<"gw/down">>[1] | Buffer) => {
      const counted = () => {
        const d = gateway.stats.downlinks;
        return d.whitelist + d.time + d.bad;
      };
      const before = counted();
      await service.publishAsync(
        topicOf("gw/down", GW),
        Buffer.isBuffer(payload) ? payload : encodePayload("gw/down", payload),
        { qos: 1 },
      );
      // The downlink is handled when the gateway's counters move.
      const deadline = performance.now() + 10_000;
      while (counted() === before && performance.now() < deadline) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(counted()).toBe(before + 1);
    };
    return { clock, statuses, checkin, send };
  }

  it("sets a gateway clock an hour off, answering its check-in", async () => {
    const { clock, checkin, send } = await start(HOUR);
    expect(checkin.online && checkin.checkin_at).toBe(toIsoMicros(T0 + HOUR));
    await send({
      v: 1,
      type: "time",
      now: toIsoMicros(clock.now()),
      checkin_at: checkin.online ? checkin.checkin_at : undefined,
    });
    expect(gateway.gatewayClock.now()).toBe(clock.now());
    expect(gateway.stats.clockCorrections).toBe(1);
  });

  it("leaves a right clock alone, even for an answer that arrives late", async () => {
    const { clock, checkin, send } = await start(0);
    // Queued in the persistent session while the gateway was away: two hours late.
    clock.runSync({ until: clock.now() + 2 * HOUR });
    await send({
      v: 1,
      type: "time",
      now: toIsoMicros(T0 + 500),
      checkin_at: checkin.online ? checkin.checkin_at : undefined,
    });
    expect(gateway.gatewayClock.now()).toBe(clock.now());
    expect(gateway.stats.clockCorrections).toBe(0);
  });

  it("counts a downlink off its schema and goes on; acknowledges a whitelist once", async () => {
    const { statuses, send } = await start(0);
    const refused: { field: unknown; message: string }[] = [];
    gateway.events.on("downlinkRefused", ({ error }) =>
      refused.push({ field: error.details.field, message: error.message }),
    );
    await send(Buffer.from('{"v":1,"type":"whitelist","devices":[{"mac_address":"nope"}]}'));
    expect(gateway.stats.downlinks.bad).toBe(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.field).toMatch(/^devices\.0\./);
    expect(refused[0]!.message).toContain("rpm/v1/gw/{gateway_uuid}/down");
    expect(gateway.rules.list()).toEqual([]);
    const whitelist = {
      v: 1 as const,
      type: "whitelist" as const,
      devices: [
        { mac_address: "C00000000001", sensor_code: "10", whitelist_status: "RE" as const },
      ],
    };
    await send(whitelist);
    await statuses.count(2, "the acknowledgement");
    expect(parsePayload("gw/status", statuses.messages[1]!.payload)).toMatchObject({
      whitelist: [{ mac_address: "C00000000001", sensor_code: "10" }],
    });
    // Confirmed by the service (CO) and unchanged: nothing more to say.
    await send({ ...whitelist, devices: [{ ...whitelist.devices[0]!, whitelist_status: "CO" }] });
    await gateway.modem.session.landed();
    expect(statuses.messages).toHaveLength(2);
    expect(gateway.stats.downlinks).toEqual({ whitelist: 2, time: 0, bad: 1 });
  });
});
