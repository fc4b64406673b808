import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectAsync } from "mqtt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Lab, type LabInfo } from "../../src/app/lab.ts";
import { serveConfig } from "../../src/config/serve-config.ts";
import { createLogger } from "../../src/core/logger.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { LabApi } from "../support/lab-api.ts";
import { catalogue, RECEIVED, readingsOf, senderFor, uplinkMessage } from "./fixtures.ts";

const scale = senderFor(catalogue.get("Vendor Cellular Scale"), 3);

/**
 * README "Dead letters" on `rpmlab serve` as its composition root builds it: a payload published
 * over MQTT is dead-lettered by the running ingestion, seen and replayed through the lab admin
 * API, and the replay runs in that same ingestion (its events fire).
 */
describe.each([
  ["a memory store", false],
  // A SQLite file: batches, replays included, commit in the ingestion worker thread.
  ["a SQLite file", true],
])("dead letters on a serving lab with %s", (_label, file) => {
  let lab: Lab;
  let info: LabInfo;
  let api: LabApi;
  let dir: string | undefined;
  beforeEach(async () => {
    dir = file ? await mkdtemp(join(tmpdir(), "rpmlab-dlq-")) : undefined;
    const store = dir === undefined ? "memory" : `sqlite:${join(dir, "lab.db")}`;
    const config = serveConfig(
      { store, broker: "embedded:0", port: "0", adminToken: "dead-letters-admin-token" },
      {},
    );
    lab = new Lab(
      config,
      createLogger({ level: "silent" }),
      new VirtualClock({ startMs: RECEIVED }),
    );
    info = await lab.start();
    api = new LabApi(info);
  });
  afterEach(async () => {
    await lab.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  const admin = async (method: string, path: string) => {
    const { base_url, admin_token } = info;
    const response = await fetch(`${base_url}/lab/v1/dead-letters/${path}`, {
      method,
      headers: { authorization: `Bearer ${admin_token}` },
    });
    // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of several shapes
    return { status: response.status, body: (await response.json()) as any };
  };

  it("keeps a published payload the lab cannot resolve, and replays it once the device is activated", async () => {
    const message = uplinkMessage(scale, "cell-9", readingsOf(scale, 2, 0).slice(0, 1));
    const envelope = JSON.parse(message.payload.toString());
    envelope.device_type = "Vendor Cellular Scale Pro";
    const credentials = await api.credentials("cellular", scale.hardwareUuid);
    const device = await connectAsync(info.mqtt_url, {
      clientId: scale.hardwareUuid,
      ...credentials,
      reconnectPeriod: 0,
    });
    try {
      // QoS 1 on the embedded broker: the PUBACK comes after ingestion committed.
      await device.publishAsync(message.topic, JSON.stringify(envelope), { qos: 1 });
    } finally {
      await device.endAsync();
    }
    const listed = await admin("GET", `?source=${scale.hardwareUuid}`);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject([
      {
        topic: message.topic,
        message_id: "cell-9",
        reason: expect.stringMatching(/^readings\.0: E_INGEST_UNKNOWN_DEVICE: device_type/),
      },
    ]);
    const shown = await admin("GET", `${listed.body[0].id}/`);
    expect(JSON.parse(shown.body.payload_text)).toEqual(envelope);

    const activated = await api.hwi("POST", "hwi-devices/", {
      device: { name: "Vendor Cellular Scale", hardware_uuid: scale.hardwareUuid },
    });
    expect(activated.status).toBe(201);
    const announced: number[] = [];
    lab.running.ingestor.events.on("measurement.stored", ({ rows }) =>
      announced.push(...rows.map((r) => r.id)),
    );
    const replayed = await admin("POST", `${listed.body[0].id}/replay/`);
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ result: "stored", dead_letter: null });
    expect(announced).toHaveLength(replayed.body.stored);
    expect(announced.length).toBeGreaterThan(0);
    expect((await admin("GET", "")).body).toEqual([]);
  });
});
