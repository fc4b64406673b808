/**
 * Issue 6 §4 (gateway half), on the emulated BLE path and against "any broker": the same
 * gateway runtime drives the unmodified noble central (NobleBle) on a virtual controller, a
 * bleno blood pressure cuff (in its worker) on the same medium; the test plays the service on a
 * plain broker — it sends the whitelist, sees the acknowledgement in the status, and decodes the
 * relayed readings from the gw/up envelope with the shared codecs.
 */
import type { MqttClient } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { NobleBle } from "../../src/app/ble-gateway.ts";
import { EmulatedRadio } from "../../src/ble/radio.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { SystemClock } from "../../src/core/clock.ts";
import { Rng } from "../../src/core/rng.ts";
import { DeviceHost } from "../../src/devices/device-host.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { macOf } from "../../src/gateway/reading-assembler.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { type Broker, createBroker } from "../../src/mqtt/broker.ts";
import { connectClient, subscribeAll } from "../../src/mqtt/client.ts";
import { encodePayload, parsePayload } from "../../src/mqtt/payload.ts";
import { filterOf, topicOf } from "../../src/mqtt/topics.ts";
import { toUplink } from "../../src/mqtt/uplink.ts";
import { catalogue, readingsFor, within } from "../ble/support/lab.ts";

const GW = "E0E1E2E3E4E5";

describe("the gateway runtime on the emulated BLE path, against a plain broker", () => {
  const clock = new SystemClock();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it("relays a stored and a live reading of a bleno cuff through noble", async () => {
    const profile = catalogue.get("Vendor BPM - S");
    const radio = new EmulatedRadio(clock, new Rng("emulated-gateway"));
    closers.push(async () => {
      radio.close();
      clock.dispose();
    });
    const broker: Broker = createBroker("embedded:0");
    await broker.start();
    closers.push(() => broker.stop());
    const device = await DeviceHost.start(radio.controller("device:BPM1"), {
      profile: profile.name,
      serial: "BPM00001",
      clockOffsetMs: 0,
    });
    closers.push(() => device.close());
    const [stored, live] = readingsFor(profile, "emulated-gateway", 2) as [never, never];
    expect(await device.measure(stored)).toBe("stored");

    // The service's side: a plain client on the broker.
    const service: MqttClient = await connectClient(broker.url, { clientId: "svc", clean: true });
    closers.push(async () => void (await service.endAsync()));
    const received: { topic: string; payload: Buffer }[] = [];
    const waiters = new Set<() => void>();
    service.on("message", (topic, payload) => {
      received.push({ topic, payload });
      for (const wake of [...waiters]) wake();
    });
    await subscribeAll(service, [filterOf("gw/up"), filterOf("gw/status")]);
    const message = (what: string, pick: (m: { topic: string; payload: Buffer }) => boolean) =>
      within(30_000, what, (done: (m: { topic: string; payload: Buffer }) => void) => {
        const check = () => {
          const hit = received.find(pick);
          if (hit !== undefined) {
            waiters.delete(check);
            done(hit);
          }
        };
        waiters.add(check);
        check();
      });

    const gateway = await Gateway.open({
      clock,
      rng: new Rng("emulated-gateway"),
      catalogue,
      gatewayUuid: GW,
      broker: { url: broker.url },
      ble: new NobleBle({ kind: "emulated" }, clock, new Rng("noble"), { radio, revisitMs: 0 }),
      link: { profile: { ...STEADY_LINK_PROFILE, latencyMs: 1, latencyJitterMs: 0 } },
      lingerMs: 3000,
    });
    closers.push(() => gateway.stop());
    await gateway.start();
    await message("the first check-in", (m) => m.topic === topicOf("gw/status", GW));

    const mac = macOf(device.address);
    await service.publishAsync(
      topicOf("gw/down", GW),
      encodePayload("gw/down", {
        v: 1,
        type: "whitelist",
        devices: [{ mac_address: mac, sensor_code: "10", whitelist_status: "RE" }],
      }),
      { qos: 1 },
    );
    const ack = await message("the whitelist acknowledged", (m) => {
      if (m.topic !== topicOf("gw/status", GW)) return false;
      const status = parsePayload("gw/status", m.payload);
      return status.online && (status.whitelist ?? []).some((d) => d.mac_address === mac);
    });
    expect(parsePayload("gw/status", ack.payload)).toMatchObject({
      online: true,
      signal_strength: STEADY_LINK_PROFILE.meanSignal,
      whitelist: [{ mac_address: mac, sensor_code: "10" }],
    });

    // The visit fetches the stored reading; a live one comes while the gateway lingers.
    await within(30_000, "a visit", (done: (v: undefined) => void) =>
      gateway.events.on("reading", () => done(undefined)),
    );
    expect(await device.measure(live)).toBe("sent");
    const readings = async () =>
      received
        .filter((m) => m.topic === topicOf("gw/up", GW))
        .flatMap((m) => toUplink(parsePayload("gw/up", m.payload)).readings);
    await within(30_000, "two relayed readings", (done: (v: undefined) => void) => {
      const check = () => {
        void readings().then((r) => {
          if (r.length >= 2) {
            waiters.delete(check);
            done(undefined);
          }
        });
      };
      waiters.add(check);
      check();
    });
    const relayed = await readings();
    const mapping = mappingFor(profile);
    expect(relayed.map((r) => mapping.decode(r.values, profile).records)).toEqual([
      (stored as { records: unknown }).records,
      (live as { records: unknown }).records,
    ]);
    expect(relayed.every((r) => r.deviceAddress === mac && r.sensorCode === "10")).toBe(true);
    // The visit ends after its linger: the cuff's clock was set through Current Time.
    const visit = await within(30_000, "the end of the visit", (done: (v: unknown) => void) =>
      gateway.events.on("session", (e) => done(e)),
    );
    expect(visit).toMatchObject({ error: null, result: { timeSet: true, clockUnset: false } });
    expect(gateway.stats).toMatchObject({ readings: 2, sessions: 1, deviceClocksSet: 1 });
  }, 90_000);
});
