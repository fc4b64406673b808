import { describe, expect, it } from "vitest";
import {
  activate,
  eventsOf,
  type FulfilmentEnv,
  fieldErrors,
  GW,
  knownGateway,
  patientWithAddress,
} from "../env.ts";

/** Spec 4.3 PUT hwi-devices/{id}/: only the nested patient changes. */
export function deviceUpdateSection(env: FulfilmentEnv): void {
  const put = (id: string, body: unknown) => env.services.update.update(env.account.id, id, body);

  describe("device update (PUT)", () => {
    it("attaches a patient by external_id, creating it when absent, and ignores other fields", async () => {
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const result = await put(device.id, {
        patient: { external_id: "P-7", name: "Seven", phone_number: "555-0107" },
        status: "Delivered",
        device: { name: "Vendor Pulse Ox", hardware_uuid: "FED091A643FF" },
        sensor_id: "XYZ123",
      });
      expect(result.patientCreated).toBe(true);
      expect(result.ignored).toEqual(["status", "device", "sensor_id"]);
      expect(result.device).toMatchObject({
        name: "Vendor Scale",
        hardwareUuid: GW,
        status: "Active",
        sensorId: null,
        patient: { externalId: "P-7", name: "Seven", phoneNumber: "555-0107" },
      });
      const record = await env.services.views.get(env.account.id, device.id);
      expect(record).toMatchObject({ patient_id: "P-7", patient_phone_number: "555-0107" });
    });

    it("updates only the fields sent on the attached patient", async () => {
      const p = await patientWithAddress(env, "P-1", { email: "one@example.com" });
      const { device } = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-1" },
      });
      const { device: after } = await put(device.id, {
        patient: { care_manager: "Dr Who", sms_opt_in: false },
      });
      expect(after.patient).toMatchObject({
        externalId: "P-1",
        email: "one@example.com",
        careManager: "Dr Who",
        smsOptIn: false,
        address: p.address,
        addressStatus: "Verified",
      });
    });

    it("re-verifies the address and releases a request held for it (Client Action Required → Ready to Ship)", async () => {
      const { device } = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-1" },
      });
      expect(device.status).toBe("Client Action Required");
      const invalid = await put(device.id, {
        patient: { address: "1 Undeliverable Way", city: "Irvine", state: "CA", zip_code: "92614" },
      });
      expect(invalid.device.patient?.addressStatus).toBe("Invalid");
      expect(invalid.device.status).toBe("Client Action Required");
      const fixed = await put(device.id, { patient: { address: "12 Main Street" } });
      expect(fixed.device.patient).toMatchObject({
        addressStatus: "Verified",
        addressVerifiedBy: "internal",
      });
      expect(fixed.device.status).toBe("Ready to Ship");
      expect(fixed.released.map((d) => d.id)).toEqual([device.id]);
      expect(eventsOf(env, "fulfilment.status").map((e) => e.status)).toEqual([
        "Client Action Required",
        "Ready to Ship",
      ]);
      const record = await env.services.views.get(env.account.id, device.id);
      expect(record.device.fulfillment_request?.reason).toBeNull();
    });

    it("holds an accepted request when its patient is detached, and releases it when one is attached", async () => {
      await patientWithAddress(env, "P-1");
      await patientWithAddress(env, "P-2");
      const { device } = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-1" },
      });
      const accepted = device.status;
      expect(["Ready to Ship", "On Hold"]).toContain(accepted);
      const detached = await put(device.id, { patient: null });
      expect(detached.device).toMatchObject({ status: "Client Action Required", patient: null });
      const record = await env.services.views.get(env.account.id, device.id);
      expect(record.device.fulfillment_request?.reason).toMatch(/^no patient/);
      const attached = await put(device.id, { patient: { external_id: "P-2" } });
      expect(attached.released.map((d) => d.id)).toEqual([device.id]);
      expect(eventsOf(env, "fulfilment.status").map((e) => e.status)).toEqual([
        accepted,
        "Client Action Required",
        attached.device.status,
      ]);
    });

    it("keeps a duplicate submission held when the address changes", async () => {
      await patientWithAddress(env, "P-1");
      const body = { device: { name: "Vendor Scale" }, patient: { external_id: "P-1" } };
      await activate(env, body);
      const { device: dup } = await activate(env, body);
      const { device } = await put(dup.id, { patient: { city: "Tustin" } });
      expect(device.status).toBe("Client Action Required");
    });

    it("ships the duplicate left behind when the request it duplicated moves to another patient", async () => {
      await patientWithAddress(env, "P-1");
      await patientWithAddress(env, "P-2");
      const body = { device: { name: "Vendor Scale" }, patient: { external_id: "P-1" } };
      const { device: first } = await activate(env, body);
      const { device: dup } = await activate(env, body);
      expect(dup.status).toBe("Client Action Required");
      // The first request was meant for another patient: the one left is P-1's request.
      await put(first.id, { patient: { external_id: "P-2" } });
      const left = await env.store.devices.get(env.account.id, dup.id);
      expect(left?.status).toBe("Ready to Ship");
      expect((await env.services.orders.get(dup.id)).next_status).toBe("Dropshipped");
      // Likewise when the request it duplicated loses its patient.
      const pulse = { device: { name: "Vendor Pulse Ox" }, patient: { external_id: "P-1" } };
      const { device: other } = await activate(env, pulse);
      const { device: otherDup } = await activate(env, pulse);
      await put(other.id, { patient: null });
      expect((await env.store.devices.get(env.account.id, otherDup.id))?.status).toBe(
        "Ready to Ship",
      );
    });

    it("ships one of two requests made while the address was incomplete, once it is complete", async () => {
      const body = { device: { name: "Vendor Scale" }, patient: { external_id: "P-1" } };
      const first = await activate(env, body);
      const second = await activate(env, body);
      expect([first.device.status, second.device.status]).toEqual([
        "Client Action Required",
        "Client Action Required",
      ]);
      expect(first.reason).toMatch(/incomplete/);
      // Spec 3: a duplicate submission, whatever else holds it.
      expect(second.reason).toContain(`duplicate submission: device ${first.device.id}`);
      const { released } = await put(first.device.id, {
        patient: { address: "12 Main Street", city: "Irvine", state: "CA", zip_code: "92614" },
      });
      expect(released.map((d) => d.id)).toEqual([first.device.id]);
      const held = await env.store.devices.get(env.account.id, second.device.id);
      expect(held?.status).toBe("Client Action Required");
    });

    it("detaches the patient with patient: null, and changes nothing without a patient key", async () => {
      await patientWithAddress(env, "P-1");
      const { device } = await activate(env, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-1" },
      });
      const same = await put(device.id, { status: "Delivered" });
      expect(same.device).toEqual(device);
      const { device: detached } = await put(device.id, { patient: null });
      expect(detached.patient).toBeNull();
      expect(await env.store.patients.get(env.account.id, "P-1")).not.toBeNull();
    });

    it("needs external_id to give a device without patient one, and types its fields as DRF does", async () => {
      const { device } = await activate(env, { device: { name: "Vendor Scale" } });
      expect(await fieldErrors(put(device.id, { patient: { name: "Nobody" } }))).toEqual({
        patient: { external_id: [expect.stringContaining("This field is required")] },
      });
      expect(
        await fieldErrors(
          put(device.id, { patient: { external_id: "P-1", sms_opt_in: "maybe", name: [] } }),
        ),
      ).toEqual({
        patient: { name: ["Not a valid string."], sms_opt_in: ["Must be a valid boolean."] },
      });
      expect(await fieldErrors(put(device.id, { patient: "P-1" }))).toEqual({
        patient: { non_field_errors: ["Invalid data. Expected a dictionary, but got str."] },
      });
      // Nothing was written by the refused calls.
      expect(await env.store.patients.get(env.account.id, "P-1")).toBeNull();
    });

    it("answers not found for a device of another account", async () => {
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      const { device } = await env.services.activation.activate(other.id, {
        device: { name: "Vendor Scale" },
      });
      await expect(put(device.id, { patient: { external_id: "X" } })).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
    });
  });
}
