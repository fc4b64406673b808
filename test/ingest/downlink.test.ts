/**
 * The lab's downlink (spec 2.3) on both broker kinds: published from inside the embedded aedes,
 * or by a client on an external broker (the local Mosquitto; skipped with the reason elsewhere,
 * required on CI). The whole whitelist with statuses and sensor ids, the time answering a
 * check-in whose clock is off (only then), and delivery to a gateway's persistent session while
 * it is away.
 */
import { describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { deviceMacAddress } from "../../src/fulfilment/identifiers.ts";
import { Downlinks, downlinkChannel, downlinkClientId } from "../../src/ingest/downlink.ts";
import { type Broker, createBroker } from "../../src/mqtt/broker.ts";
import { connectClient, subscribeAll } from "../../src/mqtt/client.ts";
import { parsePayload } from "../../src/mqtt/payload.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { openStore } from "../../src/store/open.ts";
import { hexId, Inbox, probeBroker } from "../mqtt/helpers.ts";
import { MOSQUITTO_URL } from "../support/mosquitto.ts";

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const mosquittoProblem = await probeBroker(MOSQUITTO_URL);
if (mosquittoProblem !== null && process.env.CI) {
  throw new Error(`Mosquitto not reachable at ${MOSQUITTO_URL}: ${mosquittoProblem}`);
}
if (mosquittoProblem !== null) {
  console.warn(`downlink over Mosquitto: ${mosquittoProblem}: skipped`);
}

const BROKERS: [string, () => Broker][] = [
  ["embedded aedes", () => createBroker("embedded:0")],
  ...(mosquittoProblem === null
    ? ([["Mosquitto", () => createBroker(MOSQUITTO_URL)]] as [string, () => Broker][])
    : []),
];

for (const [name, make] of BROKERS) {
  describe(`downlink on ${name}`, () => {
    it("sends the whole whitelist and, to a clock off by over a second, the time, queued for a gateway that is away", async () => {
      const clock = new VirtualClock({ startMs: T0 });
      const store = await openStore("memory", { clock, rng: new Rng("downlink") });
      const broker = make();
      await broker.start();
      const gw = hexId(12);
      const account = await store.accounts.create({
        clientDomain: "d",
        environment: "development",
      });
      await store.gateways.associate(account.id, gw);
      const inhaler = await store.devices.create(account.id, {
        name: "Vendor Inhaler Sensor",
        sensorCode: "25",
        hardwareUuid: gw,
        sensorId: "INH0042",
        patientId: null,
        status: "Active",
      });
      const bpm = await store.devices.create(account.id, {
        name: "Vendor BPM - S",
        sensorCode: "10",
        hardwareUuid: gw,
        sensorId: null,
        patientId: null,
        status: "Active",
      });
      await store.whitelist.upsert(gw, {
        macAddress: deviceMacAddress(inhaler.id),
        sensorCode: "25",
        whitelistStatus: "RE",
      });
      await store.whitelist.upsert(gw, {
        macAddress: deviceMacAddress(bpm.id),
        sensorCode: "10",
        whitelistStatus: "CO",
      });

      // The gateway subscribes on a persistent session, then goes away.
      const clientId = gw;
      const first = await connectClient(broker.url, { clientId, clean: false });
      await subscribeAll(first, [topicOf("gw/down", gw)]);
      await first.endAsync();

      const channel = await downlinkChannel(broker, `dl-${hexId(8)}`);
      const downlinks = new Downlinks({ store, clock, channel });
      // A check-in 2 s behind the service's clock gets the whitelist, then the time.
      await downlinks.checkedIn(gw, { at: T0 - 2000, receivedAt: T0 });
      expect(downlinks.counts).toEqual({ whitelist: 1, time: 1, failed: 0 });
      // One that held exactly the whitelist, its clock within a second: nothing to send.
      await downlinks.checkedIn(gw, { at: T0 - 1000, receivedAt: T0 }, true);
      expect(downlinks.counts).toEqual({ whitelist: 1, time: 1, failed: 0 });
      // One that held it, its clock 5 s ahead: the time only.
      await downlinks.checkedIn(gw, { at: T0 + 5000, receivedAt: T0 }, true);
      expect(downlinks.counts).toEqual({ whitelist: 1, time: 2, failed: 0 });

      // Back: the session delivers what was queued, in order.
      const inbox = new Inbox();
      const again = await connectClient(broker.url, {
        clientId,
        clean: false,
        prepare: (client) => inbox.watch(client),
      });
      try {
        await inbox.count(3);
        const [whitelist, behind, ahead] = inbox.messages.map((m) =>
          parsePayload("gw/down", m.payload),
        );
        // Entries in activation order (here the same instant, then by address).
        const entries = [
          {
            mac_address: deviceMacAddress(inhaler.id),
            sensor_code: "25",
            sensor_id: "INH0042",
            whitelist_status: "RE",
          },
          { mac_address: deviceMacAddress(bpm.id), sensor_code: "10", whitelist_status: "CO" },
        ].sort((a, b) => (a.mac_address < b.mac_address ? -1 : 1));
        expect(whitelist).toEqual({ v: 1, type: "whitelist", devices: entries });
        expect(behind).toEqual({
          v: 1,
          type: "time",
          now: "2026-06-01T12:00:00.000000Z",
          checkin_at: "2026-06-01T11:59:58.000000Z",
        });
        expect(ahead).toMatchObject({ type: "time", checkin_at: "2026-06-01T12:00:05.000000Z" });
        expect(inbox.messages).toHaveLength(3);
      } finally {
        await again.endAsync(true);
        // Leave no persistent session behind on a shared broker.
        const clean = await connectClient(broker.url, { clientId, clean: true });
        await clean.endAsync();
        await channel.close();
        await broker.stop();
        await store.close();
      }
    });
  });
}

describe("the downlink client's id", () => {
  it("is its ingest id's own, within 23 characters, even for ids that share their first 20", () => {
    expect(downlinkClientId("rpmlab-ingest")).toBe("rpmlab-ingest-dl");
    const ids = ["qa-multi-ingest-node1", "qa-multi-ingest-node2", "qa-multi-ingest-node-1234"];
    const clientIds = ids.map(downlinkClientId);
    expect(new Set(clientIds).size).toBe(ids.length);
    for (const id of clientIds) expect(id).toMatch(/^[A-Za-z0-9-]{1,23}$/);
    expect(downlinkClientId(ids[0]!)).toBe(downlinkClientId(ids[0]!));
  });
});
