/**
 * The dashboard's data against `rpmlab serve`'s composition (README "Dashboard"): what a gateway
 * publishes over MQTT shows up on GET /lab/v1/events/ as it happens — its check-in, the device
 * activated on it, the readings with their values, the webhook attempt they caused, a payload
 * ingestion refused — and GET /lab/v1/overview/ counts it all. A stopping lab ends the stream.
 */
import type mqtt from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { toIsoMicros } from "../../src/core/time.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { ServeLab } from "../gateway/serve-lab.ts";
import {
  checkinPayload,
  RECEIVED,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "../ingest/fixtures.ts";
import { SseClient } from "../support/sse.ts";
import { Receiver } from "../webhooks/receiver.ts";

const catalogue = Catalogue.load();
const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);

describe("dashboard live feed on serve's composition", () => {
  let serve: ServeLab | undefined;
  let receiver: Receiver | undefined;
  let feed: SseClient | undefined;
  let client: mqtt.MqttClient | undefined;

  afterEach(async () => {
    await client?.endAsync();
    await feed?.close();
    await serve?.stop();
    await receiver?.close();
  }, 30_000);

  it("streams check-ins, activations, readings, webhook attempts and dead letters; overview counts them", async () => {
    const clock = new VirtualClock({ startMs: RECEIVED });
    serve = await ServeLab.start(clock);
    const { info } = serve;
    receiver = await Receiver.start();
    const hook = await serve.hwi("POST", "webhooks/", { endpoint: receiver.url() });
    expect(hook.status).toBe(201);

    feed = await SseClient.open(`${info.base_url}/lab/v1/events/`, info.admin_token);
    expect(feed.response.status).toBe(200);
    expect(feed.response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    // The lab's clock first: virtual here, as in `rpmlab demo`.
    expect(await feed.next("clock")).toEqual({ now: toIsoMicros(clock.now()) });

    client = await serve.gatewayClient(bpm.hardwareUuid);
    await client.publishAsync(
      topicOf("gw/status", bpm.hardwareUuid),
      checkinPayload(21, clock.now()),
      { qos: 1 },
    );
    expect(await feed.next("gateway")).toMatchObject({
      gateway_uuid: bpm.hardwareUuid,
      online: true,
      signal_strength: 21,
      account_id: null,
    });

    const device = await serve.hwi<{ id: string }>("POST", "hwi-devices/", {
      device: { name: bpm.profile.name, hardware_uuid: bpm.hardwareUuid },
      patient: { external_id: "P-FEED" },
    });
    expect(device.status).toBe(201);
    expect(await feed.next("activated")).toMatchObject({
      hwi_device_id: device.body.id,
      device_name: bpm.profile.name,
      patient_id: "P-FEED",
      hardware_uuid: bpm.hardwareUuid,
    });

    const [taken] = readingsOf(bpm, 2, 0);
    await client.publishAsync(...publish(uplinkMessage(bpm, "feed-1", [taken!])));
    const batch = await feed.next("batch");
    const stored = batch.stored as number;
    expect(stored).toBe(taken!.records.length);
    const pressure = await feed.next("reading", (r) => r.metric === "blood_pressure");
    const record = taken!.records.find((r) => r.metric === "blood_pressure")!;
    expect(pressure).toMatchObject({
      hwi_device_id: device.body.id,
      patient_id: "P-FEED",
      hardware_uuid: bpm.hardwareUuid,
      value_1: record.value_1,
      value_2: record.value_2,
      // From the device's catalogue entry.
      value_1_units: "mmHg",
      value_2_units: "mmHg",
      value_2_meaning: "diastolic",
      // As the record's own timestamp in the API: microseconds.
      timestamp: toIsoMicros(taken!.timestamp),
    });
    // One webhook per record (post_as_array off), each attempted once and delivered.
    const attempt = await feed.next("webhook");
    expect(attempt).toMatchObject({
      event: "MEASUREMENT",
      state: "delivered",
      attempt: 1,
      status_code: 200,
    });

    await client.publishAsync(topicOf("gw/up", bpm.hardwareUuid), "{not json", { qos: 1 });
    const dead = await feed.next("dead_letter");
    expect(dead.topic).toBe(topicOf("gw/up", bpm.hardwareUuid));
    expect(dead.reason).toMatch(/JSON/i);

    await receiver.count(stored);
    const overview = await fetch(`${info.base_url}/lab/v1/overview/`, {
      headers: { authorization: `Bearer ${info.admin_token}` },
    });
    expect(overview.status).toBe(200);
    const body = (await overview.json()) as {
      accounts: {
        client_domain: string;
        patients: number;
        devices: number;
        gateways: number;
        measurements: number;
        webhook_deliveries: Record<string, number>;
      }[];
      dead_letters: number;
    };
    expect(body.dead_letters).toBe(1);
    expect(body.accounts.find((a) => a.client_domain === info.client_domain)).toMatchObject({
      patients: 1,
      devices: 1,
      gateways: 1,
      measurements: stored,
    });

    // Stopping the lab ends the open stream instead of waiting for the client to leave.
    await serve.stop();
    serve = undefined;
    await feed.ended;
  }, 30_000);
});

/** A fixture message as MQTT.js publishes it, QoS 1 (the gateway's uplink). */
function publish(message: { topic: string; payload: Buffer }): [string, Buffer, { qos: 1 }] {
  return [message.topic, message.payload, { qos: 1 }];
}
