import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { connectAsync, type MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { Rng } from "../../src/core/rng.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { encodePayload } from "../../src/mqtt/payload.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { gatewayUplink } from "../../src/mqtt/uplink.ts";
import { dropStored } from "../../src/readings/dedupe.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { mosquittoOrSkip } from "../support/mosquitto.ts";
import { BIN, eventually, type Served, startServe } from "./serve-process.ts";

/**
 * Black box (issue 3 "Done when"): `rpmlab serve` started as a user starts it, a BPM activated
 * through the HWI API, a simulated gateway publishing over real MQTT with lab-issued
 * credentials, and the readings read back through every measurement endpoint. Runs on the
 * embedded broker and, as an external broker, on the local Mosquitto.
 */
const MINUTE = 60_000;
const DAY = 86_400_000;
const profile = Catalogue.load().get("Vendor BPM - Wide Range");
const patient = PatientModels.load().get("hypertensive");

interface Measurement {
  metric: string;
  metric_type: string;
  timestamp: string;
  value_1: string;
  value_2: string;
  sensor_code: string;
  patient_id: string;
  hwi_device_id: string;
  filter_params: Record<string, unknown> | null;
}

/** What a record says, without server-side ids and receipt times. */
const essence = (m: Measurement) =>
  JSON.stringify([m.metric, m.timestamp, m.value_1, m.value_2, m.filter_params]);

function serveJourney(label: string, brokerSpec: () => string) {
  describe(`rpmlab serve on ${label}`, () => {
    let served: Served | undefined;
    let gateway: MqttClient | undefined;
    const gatewayUuid = randomBytes(6).toString("hex").toUpperCase();
    const externalId = `E2E-${gatewayUuid}`;
    const ingestId = `rpmlab-ingest-${gatewayUuid.slice(0, 8).toLowerCase()}`;

    beforeAll(async () => {
      served = await startServe([
        ...["--store", "memory", "--port", "0", "--broker", brokerSpec()],
        // Unique per run (several runs may share Mosquitto); the embedded broker's ACL wants the
        // ingest client id to start with its username.
        ...["--ingest-id", ingestId],
      ]);
    });

    afterAll(async () => {
      if (gateway !== undefined) {
        // An external broker keeps retained messages: leave nothing of this run behind.
        await gateway.publishAsync(topicOf("gw/status", gatewayUuid), "", { qos: 1, retain: true });
        await gateway.endAsync();
      }
      if (served !== undefined) expect(await served.stop()).toBe(0);
      if (!brokerSpec().startsWith("embedded")) {
        // The ingest session is persistent by design (it keeps what arrives while ingestion is
        // down); a run's unique one would outlive it on the shared broker and, being in the
        // shared-subscription group, take a share of later runs' messages. A clean connect
        // with its client id ends it ([MQTT-3.1.2-6]).
        const session = await connectAsync(served!.info.mqtt_url, {
          clientId: ingestId,
          clean: true,
          reconnectPeriod: 0,
        });
        await session.endAsync();
      }
    });

    const call = async (path: string, init: RequestInit = {}, authorization?: string) => {
      const { base_url, api_key } = served!.info;
      const response = await fetch(`${base_url}${path}`, {
        ...init,
        headers: {
          "content-type": "application/json",
          authorization: authorization ?? `Api-Key ${api_key}`,
        },
      });
      const text = await response.text();
      // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of many shapes
      return { status: response.status, body: (text === "" ? null : JSON.parse(text)) as any };
    };
    const hwi = (path: string, init?: RequestInit) =>
      call(`/clients/${served!.info.client_domain}/hwi/${path}`, init);

    it.runIf(process.platform === "linux")(
      "runs in the node bin/rpmlab execs, with its 64 MiB young generation semi-space",
      () => {
        // The shell is gone (exec): the pid started is node's, with the flag before the file.
        const argv = readFileSync(`/proc/${served!.pid}/cmdline`, "utf8").split("\0");
        expect(argv.slice(0, 3)).toEqual(["node", "--max-semi-space-size=64", BIN]);
      },
    );

    it("stores what a gateway publishes once, and serves it on every measurement endpoint", async () => {
      const activated = await hwi("hwi-devices/", {
        method: "POST",
        body: JSON.stringify({
          device: { name: "Vendor BPM - L", hardware_uuid: gatewayUuid },
          patient: { external_id: externalId },
        }),
      });
      expect(activated.status).toBe(201);
      // A gateway the lab has never heard from (wire-formats "Devices"), and the legacy name
      // mapped (spec 2.4).
      expect(activated.body.status).toBe("Unknown Gateway ID");
      expect(activated.body.device.name).toBe("Vendor BPM - Wide Range");
      const deviceId: string = activated.body.id;

      const issued = await call(
        "/lab/v1/mqtt-credentials/",
        { method: "POST", body: JSON.stringify({ role: "gateway", username: gatewayUuid }) },
        `Bearer ${served!.info.admin_token}`,
      );
      expect(issued.status).toBe(201);
      gateway = await connectAsync(served!.info.mqtt_url, {
        clientId: gatewayUuid,
        username: issued.body.username,
        password: issued.body.password,
        reconnectPeriod: 0,
      });

      // Check-in: the gateway is known from now on, and the waiting device becomes Active.
      await gateway.publishAsync(
        topicOf("gw/status", gatewayUuid),
        JSON.stringify({
          v: 1,
          online: true,
          signal_strength: 22,
          firmware_version: "2.4.1",
          bootloader_version: "1.0.3",
          provisioned: true,
          checkin_at: new Date().toISOString(),
        }),
        { qos: 1, retain: true },
      );
      await eventually(async () => {
        const device = await hwi(`hwi-devices/${deviceId}/`);
        return device.body.status === "Active" ? device : undefined;
      }, "the device to become Active after the gateway checked in");

      // Ten days of readings ending now (serve runs on the system clock, and the unpaginated
      // 30-day window must hold them), with the device's own re-sends, one envelope per
      // reading; the first envelope twice, as a broker redelivery would. Ten days, not fewer:
      // how many readings a short window holds depends on the time of day it ends.
      const now = Math.floor(Date.now() / MINUTE) * MINUTE;
      const generated = generateReadings({
        devices: [profile],
        patient,
        rng: new Rng(`e2e/${gatewayUuid}`),
        start: now - 10 * DAY,
        days: 10,
        duplicateRate: 0.1,
      }).filter((r) => r.timestamp < now);
      const mapping = mappingFor(profile);
      const envelopes = generated.map((reading, i) =>
        gatewayUplink({
          messageId: `e2e-${gatewayUuid}-${i}`,
          gatewayUuid,
          sentAt: now,
          readings: [
            {
              deviceAddress: "C0FFEE000001",
              sensorCode: "10",
              receivedAt: now,
              sequence: i,
              values: mapping.encode(reading, profile, i),
            },
          ],
        }),
      );
      for (const envelope of [envelopes[0]!, ...envelopes]) {
        await gateway.publishAsync(
          topicOf("gw/up", gatewayUuid),
          encodePayload("gw/up", envelope),
          {
            qos: 1,
          },
        );
      }

      const expected = dropStored(generated).readings.flatMap((r) => r.records).length;
      expect(expected).toBeGreaterThan(10);
      const page = await eventually(async () => {
        const res = await hwi(`hwi-devices/${deviceId}/measurements/?page=1&page_size=1000`);
        return res.body?.count === expected ? res.body : undefined;
      }, `${expected} measurements stored`);

      const flatDevice = await hwi(`hwi-devices/${deviceId}/measurements/`);
      const byPatient = await hwi(`patients/${externalId}/measurements/`);
      const v2Patient = await call(`/api/v2/hwi/patient-measurements/?patient_id=${externalId}`);
      for (const res of [flatDevice, byPatient, v2Patient]) {
        expect(res.status).toBe(200);
        expect(res.body.map(essence).sort()).toEqual(page.results.map(essence).sort());
      }
      // Nothing stored twice: neither the redelivered envelope nor the device's re-sends.
      const essences = (page.results as Measurement[]).map(essence);
      expect(new Set(essences).size).toBe(expected);
      for (const m of page.results as Measurement[]) {
        expect(m.hwi_device_id).toBe(deviceId);
        expect(m.patient_id).toBe(externalId);
        expect(m.sensor_code).toBe("10");
        expect(m.metric_type).toBe(m.metric);
      }
      const bp = (page.results as Measurement[]).find((m) => m.metric === "blood_pressure")!;
      expect(bp.value_1).toMatch(/^\d+\.00$/);
      expect(bp.filter_params).toEqual({ measurement_index: expect.any(Number) });

      // spec 4.4: the patient id must equal the external_id exactly.
      const otherCase = await hwi(`patients/${externalId.toLowerCase()}/measurements/`);
      expect(otherCase.status === 404 || otherCase.body.length === 0).toBe(true);
    });
  });
}

serveJourney("the embedded broker", () => "embedded:0");

const mosquitto = await mosquittoOrSkip("rpmlab serve on Mosquitto");
if (mosquitto !== undefined) serveJourney(`Mosquitto (${mosquitto})`, () => mosquitto);
