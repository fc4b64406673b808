import { describe, expect, it } from "vitest";
import {
  activate,
  eventsOf,
  type FulfilmentEnv,
  fieldErrors,
  GW,
  IMEI,
  knownGateway,
  patientWithAddress,
  T0,
} from "../env.ts";

/** Spec 3 fulfilment requests and spec 2.8 gateway slots. */
export function activationRulesSection(env: FulfilmentEnv): void {
  describe("activation as a fulfilment request (no hardware_uuid)", () => {
    it("is Ready to Ship for a verified address, with the request flags kept", async () => {
      await patientWithAddress(env, "P-1");
      const { device, reason } = await activate(env, {
        device: { name: "Vendor Glucometer", hardware_uuid: "" },
        patient: { external_id: "P-1" },
        require_signature: true,
        delivery_type: "Priority",
      });
      expect(device).toMatchObject({
        status: "Ready to Ship",
        hardwareUuid: null,
        requireSignature: true,
      });
      expect(reason).toBeNull();
      const record = await env.services.views.get(env.account.id, device.id);
      expect(record.device.fulfillment_request).toEqual({
        delivery_type: "Priority",
        require_signature: true,
        ship_gateway_only: false,
        created: T0,
        reason: null,
      });
      expect(eventsOf(env, "fulfilment.status")).toMatchObject([
        { status: "Ready to Ship", patientExternalId: "P-1", previousHardwareUuid: null },
      ]);
      // No hardware yet: no hardware_uuid log.
      expect((await env.store.hardwareLogs.list(env.account.id)).rows).toEqual([]);
    });

    it("takes the deprecated Shipping type with default options (no proof of delivery)", async () => {
      await patientWithAddress(env, "P-1");
      const { device } = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-1" },
        delivery_type: "Shipping",
      });
      expect(device.requireSignature).toBe(false);
      expect(device.status).toBe("Ready to Ship");
    });

    it("is Client Action Required for an Invalid address, Ready to Ship once confirmed", async () => {
      await patientWithAddress(env, "P-BAD", { addressStatus: "Invalid" });
      await patientWithAddress(env, "P-OK", { addressStatus: "Invalid", confirmAddress: true });
      const bad = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-BAD" },
      });
      const ok = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-OK" },
      });
      expect(bad.device.status).toBe("Client Action Required");
      expect(bad.reason).toMatch(/address_status Invalid/);
      expect(ok.device.status).toBe("Ready to Ship");
      expect(eventsOf(env, "fulfilment.status").map((e) => [e.status, e.reason !== null])).toEqual([
        ["Client Action Required", true],
        ["Ready to Ship", false],
      ]);
    });

    it("is Client Action Required without a patient or with an incomplete address", async () => {
      const none = await activate(env, { device: { name: "Vendor Scale" } });
      const implicit = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "NEW" },
      });
      expect([none.device.status, implicit.device.status]).toEqual([
        "Client Action Required",
        "Client Action Required",
      ]);
      expect(none.reason).toMatch(/no patient/);
      expect(implicit.reason).toMatch(/incomplete/);
    });

    it("flags a duplicate submission (same patient and type still pending) as Client Action Required", async () => {
      await patientWithAddress(env, "P-1");
      const body = { device: { name: "Vendor Pulse Ox" }, patient: { external_id: "P-1" } };
      const first = await activate(env, body);
      const second = await activate(env, body);
      const otherType = await activate(env, { ...body, device: { name: "Vendor Scale" } });
      expect(first.device.status).toBe("Ready to Ship");
      expect(second.device.status).toBe("Client Action Required");
      expect(second.reason).toContain(first.device.id);
      expect(otherType.device.status).toBe("Ready to Ship");
    });

    it("ships only a gateway with ship_gateway_only", async () => {
      await patientWithAddress(env, "P-1");
      const { device } = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-1" },
        ship_gateway_only: "true",
      });
      expect(device).toMatchObject({ shipGatewayOnly: true, status: "Ready to Ship" });
    });
  });

  describe("gateway slots (spec 2.8)", () => {
    it("refuses a second device with the same sensor code on a gateway, naming the occupant", async () => {
      await knownGateway(env);
      const { device: first } = await activate(env, {
        device: { name: "Vendor BPM - S", hardware_uuid: GW },
      });
      // The BPM cuffs share sensor code 10: an XL cuff does not fit beside the S one.
      const fields = await fieldErrors(
        activate(env, { device: { name: "Vendor BPM - XL", hardware_uuid: GW } }),
      );
      expect(fields).toEqual({
        device: {
          hardware_uuid: [
            `Gateway ${GW} already has a device with sensor code 10 (Vendor BPM - S, hwi_device_id ${first.id}); only one device per sensor code can be assigned to a gateway (spec 2.8).`,
          ],
        },
      });
      // Another sensor code fits.
      await activate(env, { device: { name: "Vendor Scale", hardware_uuid: GW } });
      expect((await env.store.devices.list(env.account.id)).rows).toHaveLength(2);
    });

    it("holds one medication cap per gateway (one code, 27) beside devices of other codes", async () => {
      await knownGateway(env);
      const { device: cap } = await activate(env, {
        device: { name: "Vendor Medication Cap", hardware_uuid: GW },
      });
      await activate(env, { device: { name: "Vendor Pulse Ox", hardware_uuid: GW } });
      const fields = await fieldErrors(
        activate(env, { device: { name: "Vendor Medication Cap", hardware_uuid: GW } }),
      );
      const [message] = (fields.device as { hardware_uuid: string[] }).hardware_uuid;
      expect(message).toContain(`sensor code 27 (Vendor Medication Cap, hwi_device_id ${cap.id})`);
      expect(message).toContain("share a gateway only when their sensor codes differ");
    });

    it("refuses an inhaler whose sensor id is already on the gateway, keyed sensor_id", async () => {
      await knownGateway(env);
      const body = {
        device: { name: "Vendor Inhaler Sensor", hardware_uuid: GW },
        sensor_id: "AB1234",
      };
      await activate(env, body);
      const fields = await fieldErrors(activate(env, body));
      expect(Object.keys(fields)).toEqual(["sensor_id"]);
      expect(fields.sensor_id).toEqual([expect.stringContaining("with sensor id AB1234")]);
    });

    it("holds one device per IMEI, and checks slots on unknown gateways too", async () => {
      await activate(env, { device: { name: "Vendor Cellular BPM", hardware_uuid: IMEI } });
      const imei = await fieldErrors(
        activate(env, { device: { name: "Vendor Cellular Scale", hardware_uuid: IMEI } }),
      );
      expect(imei).toEqual({
        device: { hardware_uuid: [expect.stringContaining(`IMEI ${IMEI}`)] },
      });
      await activate(env, { device: { name: "Vendor Scale", hardware_uuid: "AAAABBBBCCCC" } });
      const unknown = await fieldErrors(
        activate(env, { device: { name: "Vendor Scale", hardware_uuid: "aaaabbbbcccc" } }),
      );
      expect(unknown).toHaveProperty("device.hardware_uuid");
    });

    it("names no device of another account", async () => {
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      await env.services.activation.activate(other.id, {
        device: { name: "Vendor Scale", hardware_uuid: "AAAABBBBCCCC" },
      });
      const fields = await fieldErrors(
        activate(env, { device: { name: "Vendor Scale", hardware_uuid: "AAAABBBBCCCC" } }),
      );
      expect(JSON.stringify(fields)).toContain("a device of another account");
    });
  });
}
