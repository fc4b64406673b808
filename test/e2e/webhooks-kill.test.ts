import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectAsync, type MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { Rng } from "../../src/core/rng.ts";
import { toIsoMicros } from "../../src/core/time.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { encodePayload } from "../../src/mqtt/payload.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { gatewayUplink } from "../../src/mqtt/uplink.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { consumerSchema } from "../webhooks/consumer-schema.ts";
import { type Received, Receiver } from "../webhooks/receiver.ts";
import { eventually, type Served, startServe } from "./serve-process.ts";

/**
 * Issue 4 §1 "Done when": a kill -9 of `rpmlab serve` while it delivers webhooks loses no event.
 * The service runs as a child process on a SQLite file (ingestion in its worker thread); readings
 * arrive over MQTT from a gateway, patients through the API; the receiver takes a few webhooks,
 * then holds the next ones unanswered, and the service is killed with them in flight (and more
 * waiting). Restarted on the same file, it delivers every event; a repeat carries the same
 * delivery id and the same body.
 */
const GATEWAY = "A0B1C2D3E4F5";
const PATIENTS = 12;
const profile = Catalogue.load().get("Vendor BPM - Wide Range");
const patient = PatientModels.load().get("hypertensive");
const delivery = (r: Received) => r.headers["x-rpmlab-delivery"] as string;

describe("rpmlab serve killed with -9 while delivering webhooks", () => {
  let dir: string;
  let store: string;
  let receiver: Receiver;
  let served: Served | undefined;
  let gateway: MqttClient | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-kill-"));
    store = `sqlite:${join(dir, "lab.db")}`;
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await gateway?.endAsync(true);
    if (served !== undefined) await served.kill();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const serve = () =>
    startServe([
      ...["--store", store, "--broker", "embedded:0", "--port", "0"],
      // Held requests must not time out before the kill (the setup takes a few seconds); a
      // claim then lapses 2 × timeout + 1 s after it was made: 17 s.
      ...["--webhook-timeout", "8s", "--webhook-concurrency", "4"],
    ]);
  const call = async (path: string, init: RequestInit = {}, admin = false) => {
    const { base_url, api_key, admin_token } = served!.info;
    const response = await fetch(`${base_url}${path}`, {
      ...init,
      headers: {
        "content-type": "application/json",
        authorization: admin ? `Bearer ${admin_token}` : `Api-Key ${api_key}`,
      },
    });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of many shapes
    return { status: response.status, body: (text === "" ? null : JSON.parse(text)) as any };
  };
  const hwi = (path: string, init?: RequestInit) =>
    call(`/clients/${served!.info.client_domain}/hwi/${path}`, init);
  const post = (body: unknown) => ({ method: "POST", body: JSON.stringify(body) });

  it("delivers every measurement and patient event after a restart on the same file", async () => {
    let answered = 0;
    // A few answered, then every request held without an answer: in flight when the kill comes.
    receiver.behaviour = () => (answered++ < 6 ? { status: 200 } : { hold: true });
    served = await serve();
    expect((await hwi("webhooks/", post({ endpoint: receiver.url("/m") }))).status).toBe(201);
    expect(
      (await hwi("webhooks/", post({ endpoint: receiver.url("/p"), event: "PATIENT" }))).status,
    ).toBe(201);

    const device = await hwi(
      "hwi-devices/",
      post({
        device: { name: profile.name, hardware_uuid: GATEWAY },
        patient: { external_id: "K-0" },
      }),
    );
    expect(device.status).toBe(201);
    const issued = await call(
      "/lab/v1/mqtt-credentials/",
      post({ role: "gateway", username: GATEWAY }),
      true,
    );
    gateway = await connectAsync(served.info.mqtt_url, {
      clientId: GATEWAY,
      username: issued.body.username,
      password: issued.body.password,
      reconnectPeriod: 0,
    });
    const now = Math.floor(Date.now() / 60_000) * 60_000;
    await gateway.publishAsync(
      topicOf("gw/status", GATEWAY),
      JSON.stringify({
        v: 1,
        online: true,
        signal_strength: 20,
        firmware_version: "1.0",
        bootloader_version: "1.0",
        provisioned: true,
        checkin_at: toIsoMicros(now),
      }),
      { qos: 1, retain: true },
    );
    await eventually(async () => {
      const d = await hwi(`hwi-devices/${device.body.id}/`);
      return d.body.status === "Active" ? d : undefined;
    }, "the device to become Active");

    const readings = generateReadings({
      devices: [profile],
      patient,
      rng: new Rng("kill-test"),
      start: now - 5 * 86_400_000,
      days: 5,
      duplicateRate: 0,
    }).slice(0, 25);
    const mapping = mappingFor(profile);
    for (const [i, reading] of readings.entries()) {
      const envelope = gatewayUplink({
        messageId: `kill-${i}`,
        gatewayUuid: GATEWAY,
        sentAt: now,
        readings: [
          {
            deviceAddress: "C0FFEE0000AA",
            sensorCode: "10",
            receivedAt: now,
            sequence: i,
            values: mapping.encode(reading, profile, i),
          },
        ],
      });
      await gateway.publishAsync(topicOf("gw/up", GATEWAY), encodePayload("gw/up", envelope), {
        qos: 1,
      });
    }
    for (let i = 1; i <= PATIENTS; i++) {
      expect((await hwi("hwi-patients/", post({ external_id: `K-${i}` }))).status).toBe(201);
    }
    const records = readings.flatMap((r) => r.records).length;
    const stored = await eventually(async () => {
      const page = await hwi(`hwi-devices/${device.body.id}/measurements/?page=1&page_size=1000`);
      return page.body?.count === records ? page.body.results : undefined;
    }, `${records} measurements stored`);

    // Four requests held in flight (the per-endpoint concurrency), more waiting behind them.
    await receiver.until(() => receiver.inFlight >= 4, "webhooks held in flight");
    // Patient webhooks: K-0, created by the device's activation, and K-1… through hwi-patients/.
    const patientEvents = PATIENTS + 1;
    expect(receiver.accepted.length).toBeLessThan(records + patientEvents);
    await gateway.endAsync(true);
    gateway = undefined;
    await served.kill();

    receiver.behaviour = () => ({ status: 200 });
    served = await serve();
    const expected = records + patientEvents;
    const ids = () => new Set(receiver.accepted.map(delivery));
    await receiver.until(() => ids().size >= expected, `${expected} webhooks delivered`, 45_000);

    // Every event arrived, each as a strict consumer reads it.
    const m = receiver.accepted.filter((r) => r.path === "/m");
    const got = new Set(
      m.map((r) => {
        const rec = consumerSchema("MEASUREMENT", false).parse(r.json) as {
          metric: string;
          timestamp: string;
        };
        return `${rec.metric}@${rec.timestamp}`;
      }),
    );
    expect(got).toEqual(
      new Set(
        (stored as { metric: string; timestamp: string }[]).map(
          (s) => `${s.metric}@${s.timestamp}`,
        ),
      ),
    );
    const patients = new Set(
      receiver.accepted
        .filter((r) => r.path === "/p")
        .map(
          (r) =>
            (consumerSchema("PATIENT", false).parse(r.json) as { patient_id: string }).patient_id,
        ),
    );
    expect(patients).toEqual(new Set(Array.from({ length: patientEvents }, (_, i) => `K-${i}`)));
    expect(ids().size).toBe(expected);
    // A delivery sent twice (held in flight at the kill, sent again after) is the same delivery:
    // same id, same body.
    let repeated = 0;
    for (const id of ids()) {
      const copies = receiver.seen.filter((r) => delivery(r) === id);
      expect(new Set(copies.map((r) => r.body)).size).toBe(1);
      if (copies.length > 1) repeated++;
    }
    expect(repeated).toBeGreaterThanOrEqual(4);
    // The log agrees once the last attempts are recorded.
    await eventually(async () => {
      const log = await call(
        `/lab/v1/accounts/${served!.info.client_domain}/webhook-deliveries/`,
        {},
        true,
      );
      const states = (log.body as { state: string }[]).map((d) => d.state);
      return states.length === expected && states.every((s) => s === "delivered") ? log : undefined;
    }, "every delivery logged as delivered");
    expect(await served.stop()).toBe(0);
    served = undefined;
  }, 120_000);
});
