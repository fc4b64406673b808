import { describe, expect, it } from "vitest";
import { DeviceActivation } from "../../../src/fulfilment/activation.ts";
import { fulfilmentWebhookBody } from "../../../src/fulfilment/events.ts";
import { deviceMacAddress } from "../../../src/fulfilment/identifiers.ts";
import type { Store } from "../../../src/store/store.ts";
import {
  activate,
  catalogue,
  eventsOf,
  type FulfilmentEnv,
  GW,
  IMEI,
  knownGateway,
  orphan,
  patientWithAddress,
  rejection,
  T0,
} from "../env.ts";

/** Spec 2.4, 4.3, 2.3, 2.1: activation on hardware in hand, and what it sets in motion. */
export function activationSection(env: FulfilmentEnv): void {
  describe("activation on hardware in hand", () => {
    it("activates on a known gateway: Active, gateway associated, whitelisted RE, orphans attached, logged", async () => {
      await knownGateway(env);
      const a = env.account.id;
      await env.store.measurements.insertMany([
        orphan({ metric: "pulse" }),
        orphan({ metric: "blood_pressure", value1: 120, value2: 80 }),
        // Another slot of the same gateway (a scale) stays an orphan.
        orphan({ sensorCode: "34", metric: "weight", value1: 180, source: "AA" }),
      ]);
      expect(await env.store.gateways.getForAccount(a, GW)).toBeNull();
      const result = await activate(env, {
        device: { name: "Vendor BPM - Wide Range", hardware_uuid: "29-70-56-12-0b-d7" },
        patient: { external_id: "P-1" },
      });
      const { device } = result;
      expect(device).toMatchObject({
        name: "Vendor BPM - Wide Range",
        sensorCode: "10",
        hardwareUuid: GW,
        status: "Active",
        patient: { externalId: "P-1" },
      });
      expect(result).toMatchObject({
        gatewayKnown: true,
        orphansAttached: 2,
        patientCreated: true,
      });
      expect(await env.store.gateways.getForAccount(a, GW)).toMatchObject({ assignedOn: T0 });
      expect(await env.store.whitelist.list(GW)).toMatchObject([
        { macAddress: deviceMacAddress(device.id), sensorCode: "10", whitelistStatus: "RE" },
      ]);
      const mine = await env.store.measurements.query({
        accountId: a,
        deviceId: device.id,
        limit: 10,
      });
      expect(mine.rows.map((m) => [m.metric, m.patientExternalId, m.deviceName])).toEqual([
        ["pulse", "P-1", "Vendor BPM - Wide Range"],
        ["blood_pressure", "P-1", "Vendor BPM - Wide Range"],
      ]);
      expect(
        await env.store.measurements.listOrphans({ hardwareUuid: GW, sensorCode: "34" }),
      ).toHaveLength(1);
      expect((await env.store.hardwareLogs.list(a)).rows).toMatchObject([
        { deviceId: device.id, previousHardwareUuid: null, hardwareUuid: GW, reason: "activation" },
      ]);
      expect(eventsOf(env, "device.activated")).toMatchObject([
        {
          accountId: a,
          device: { id: device.id },
          patientExternalId: "P-1",
          gatewayKnown: true,
          orphansAttached: 2,
        },
      ]);
      expect(eventsOf(env, "whitelist.changed")).toMatchObject([
        { gatewayUuid: GW, added: [{ macAddress: deviceMacAddress(device.id) }], removed: [] },
      ]);
      // "Active" is no fulfilment status (spec 3): nothing for the fulfilment webhook.
      expect(eventsOf(env, "fulfilment.status")).toEqual([]);
    });

    it("maps the legacy name Vendor BPM - L to Vendor BPM - Wide Range (spec 2.4)", async () => {
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor BPM - L", hardware_uuid: GW },
      });
      expect(device.name).toBe("Vendor BPM - Wide Range");
      const record = await env.services.views.get(env.account.id, device.id);
      expect(record.device.name).toBe("Vendor BPM - Wide Range");
    });

    it("creates the device on a gateway id the lab never saw, with status Unknown Gateway ID", async () => {
      const { device, gatewayKnown } = await activate(env, {
        device: { name: "Vendor Pulse Ox", hardware_uuid: "c26b2b7d56dc" },
      });
      expect(device).toMatchObject({ hardwareUuid: "C26B2B7D56DC", status: "Unknown Gateway ID" });
      expect(gatewayKnown).toBe(false);
      expect(await env.store.gateways.get("C26B2B7D56DC")).toBeNull();
      await expect(
        env.services.gateways.info(env.account.id, "C26B2B7D56DC"),
      ).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
      expect(eventsOf(env, "device.activated")).toMatchObject([{ gatewayKnown: false }]);
      expect(eventsOf(env, "whitelist.changed")).toEqual([]);
    });

    it("activates a direct-cellular device on its IMEI and attaches its orphan readings", async () => {
      await env.store.measurements.insertMany([
        // An IMEI's orphan keeps the type its device named.
        orphan({
          hardwareUuid: IMEI,
          sensorCode: null,
          source: IMEI,
          deviceName: "Vendor Cellular Scale",
          metric: "weight",
          value1: 181,
        }),
      ]);
      const result = await activate(env, {
        device: { name: "Vendor Cellular Scale", hardware_uuid: "35-693803-564380-9" },
      });
      expect(result.device).toMatchObject({
        hardwareUuid: IMEI,
        sensorCode: null,
        status: "Active",
      });
      expect(result.orphansAttached).toBe(1);
      // An IMEI is no gateway: nothing is associated or whitelisted.
      expect(await env.store.gateways.get(IMEI)).toBeNull();
    });

    it("links a patient by external_id (any case) and creates one holding only the external_id", async () => {
      await knownGateway(env);
      const existing = await patientWithAddress(env, "P-1");
      const first = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "p-1" },
      });
      expect(first.patientCreated).toBe(false);
      expect(first.device.patient).toEqual(existing);
      const second = await activate(env, {
        device: { name: "Vendor Pulse Ox", hardware_uuid: GW },
        patient: { external_id: "P-2", name: "Ignored Name", address: "1 Elm Street" },
      });
      expect(second.patientCreated).toBe(true);
      // Spec 2.1: an implicitly created record holds only the external_id until updated.
      expect(second.device.patient).toMatchObject({ externalId: "P-2", name: null, address: null });
      expect((await env.store.patients.list(env.account.id, { count: true })).total).toBe(2);
    });

    it("activates without a patient", async () => {
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      expect(device.patient).toBeNull();
      const record = await env.services.views.get(env.account.id, device.id);
      expect(record).toMatchObject({ patient: null, patient_id: null, patient_phone_number: null });
    });

    it("lets inhalers share a gateway by sensor id and gives each its own orphan readings", async () => {
      await knownGateway(env);
      const puff = (sensorId: string) =>
        orphan({
          sensorCode: "25",
          sensorId,
          source: sensorId,
          metric: "inhaler_medication_event",
          value1: 1,
        });
      await env.store.measurements.insertMany([puff("AB1234"), puff("CD5678")]);
      const inhaler = (sensorId: string) =>
        activate(env, {
          device: { name: "Vendor Inhaler Sensor", hardware_uuid: GW },
          sensor_id: sensorId,
        });
      const one = await inhaler("AB1234");
      const two = await inhaler("CD5678");
      expect([one.device.sensorId, two.device.sensorId]).toEqual(["AB1234", "CD5678"]);
      expect([one.orphansAttached, two.orphansAttached]).toEqual([1, 1]);
      expect(await env.store.whitelist.list(GW)).toHaveLength(2);
    });

    it("is all or nothing: a failure inside the transaction leaves no trace and emits nothing", async () => {
      await knownGateway(env);
      const failing: Store = {
        ...env.store,
        transaction: (fn) =>
          env.store.transaction((tx) =>
            fn({
              ...tx,
              measurements: {
                ...tx.measurements,
                attachOrphans: async () => {
                  throw new Error("disk full");
                },
              },
            }),
          ),
      };
      const activation = new DeviceActivation({
        store: failing,
        catalogue,
        clock: env.clock,
        events: env.events,
        fulfilment: env.config,
      });
      const error = await activation
        .activate(env.account.id, {
          device: { name: "Vendor Scale", hardware_uuid: GW },
          patient: { external_id: "P-9" },
        })
        .catch((e: unknown) => e);
      expect((error as Error).message).toBe("disk full");
      const a = env.account.id;
      expect(await env.store.patients.get(a, "P-9")).toBeNull();
      expect((await env.store.devices.list(a)).rows).toEqual([]);
      expect(await env.store.gateways.getForAccount(a, GW)).toBeNull();
      expect(await env.store.whitelist.list(GW)).toEqual([]);
      expect((await env.store.hardwareLogs.list(a)).rows).toEqual([]);
      expect(env.recorded).toEqual([]);
    });

    it("refuses a gateway assigned to another account, keyed device.hardware_uuid", async () => {
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      await env.store.gateways.associate(other.id, GW);
      const error = await rejection(
        activate(env, { device: { name: "Vendor Scale", hardware_uuid: GW } }),
      );
      expect(error.code).toBe("E_API_VALIDATION");
      expect(error.details.fields).toEqual({
        device: { hardware_uuid: [expect.stringContaining("assigned to another account")] },
      });
      expect((await env.store.devices.list(env.account.id)).rows).toEqual([]);
    });

    it("renders the fulfilment webhook body of an event (wire-formats)", async () => {
      await patientWithAddress(env, "P-1");
      const { device } = await activate(env, {
        device: { name: "Vendor BPM - XL" },
        patient: { external_id: "P-1" },
      });
      const [event] = eventsOf(env, "fulfilment.status");
      expect(fulfilmentWebhookBody(event!)).toEqual({
        hwi_device_id: device.id,
        patient_id: "P-1",
        hardware_uuid: null,
        sensor_code: "10",
        device_name: "Vendor BPM - XL",
        status: "Ready to Ship",
        tracking_link: null,
        device_id: null,
      });
    });
  });
}
