import { toIsoMicros } from "../../src/core/time.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { EmbeddedBroker } from "../../src/mqtt/embedded-broker.ts";
import { ENVELOPE_VERSION } from "../../src/mqtt/envelope.ts";
import { ingestFilters, topicOf } from "../../src/mqtt/topics.ts";

/**
 * CPU per gateway check-in of the MQTT path alone, as a scenario runs it: gateways' MQTT.js
 * clients on in-process streams publish their retained status at QoS 1 into the embedded broker,
 * which hands each to the ingestion's persistent QoS 1 session — whose handler only acknowledges.
 * No parsing, no store, no gateway logic: whatever ingestion and the gateways do, a check-in
 * costs at least this. `gateways` publish together, `rounds` times (the first five warm up).
 */
export async function checkinFloorMicros(gateways: number, rounds = 25): Promise<number> {
  const broker = new EmbeddedBroker(0);
  await broker.start();
  let received = 0;
  let target = 0;
  let reached = () => {};
  const ingest = await connectClient(broker.url, {
    clientId: "bench-floor-ingest",
    handleMessage: (_packet, done) => {
      done();
      if (++received === target) reached();
    },
  });
  await ingest.subscribeAsync([...ingestFilters(null)], { qos: 1 });
  const clients = await Promise.all(
    Array.from({ length: gateways }, (_, i) =>
      connectClient(broker.url, { clientId: `bench-floor-${i}` }),
    ),
  );
  const topics = clients.map((_, i) =>
    topicOf("gw/status", `BE${i.toString(16).toUpperCase().padStart(10, "0")}`),
  );
  const status = JSON.stringify({
    v: ENVELOPE_VERSION,
    online: true,
    signal_strength: 22,
    firmware_version: "2.4.1",
    bootloader_version: "1.0.3",
    provisioned: true,
    checkin_at: toIsoMicros(Date.UTC(2026, 1, 2, 0, 15)),
    whitelist: [
      { mac_address: "F01122334401", sensor_code: "10" },
      { mac_address: "F01122334402", sensor_code: "12" },
    ],
  });
  let cpu = 0;
  for (let round = 0; round < rounds; round++) {
    target = received + gateways;
    const all = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const used = process.cpuUsage();
    clients.forEach((client, i) => {
      client.publish(topics[i]!, status, { qos: 1, retain: true });
    });
    await all;
    const { user, system } = process.cpuUsage(used);
    if (round >= 5) cpu += user + system;
  }
  await Promise.all(clients.map((c) => c.endAsync()));
  await ingest.endAsync();
  await broker.stop();
  return cpu / ((rounds - 5) * gateways);
}
