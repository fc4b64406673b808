import { describe, expect, it } from "vitest";
import { innerDeviceId } from "../../../src/fulfilment/identifiers.ts";
import {
  activate,
  type FulfilmentEnv,
  GW,
  GW2,
  knownGateway,
  patientWithAddress,
  T0,
} from "../env.ts";

/** wire-formats "Devices" record, and the hwi-devices list filters (spec 4.3). */
export function deviceViewSection(env: FulfilmentEnv): void {
  describe("device records", () => {
    it("renders the wire-formats shape plus the spec 2.4 fields", async () => {
      await knownGateway(env);
      await patientWithAddress(env, "AnExternalID", { name: "PatientOne", phoneNumber: null });
      const { device } = await activate(env, {
        device: { name: "Vendor Pulse Ox", hardware_uuid: GW },
        patient: { external_id: "AnExternalID" },
      });
      const record = await env.services.views.get(env.account.id, device.id);
      expect(record).toEqual({
        id: device.id,
        hwi_device_id: device.id,
        device: {
          id: innerDeviceId(device.id),
          name: "Vendor Pulse Ox",
          sensor_code: "24",
          hardware_uuid: GW,
          created: T0,
          fulfillment_request: null,
          meta_data: null,
          shared_hardware_uuid: false,
        },
        patient: {
          external_id: "AnExternalID",
          name: "PatientOne",
          phone_number: null,
          email: null,
          physician: null,
          clinic_name: null,
          care_manager: null,
          sms_opt_in: true,
        },
        patient_id: "AnExternalID",
        patient_phone_number: null,
        status: "Active",
        hardware_uuid: GW,
        sensor_id: null,
        properties: [],
        require_signature: false,
        ship_gateway_only: false,
      });
      expect(record.device.id).not.toBe(device.id);
      // The inner id is stable: the same device renders the same id every time.
      expect((await env.services.views.get(env.account.id, device.id)).device.id).toBe(
        record.device.id,
      );
    });

    it("says when another device shares the gateway", async () => {
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      await activate(env, { device: { name: "Vendor Pulse Ox", hardware_uuid: GW } });
      await activate(env, { device: { name: "Vendor Glucometer", hardware_uuid: GW2 } });
      const { rows } = await env.services.views.list(env.account.id, {});
      expect(rows.map((r) => r.device.shared_hardware_uuid)).toEqual([true, true, false]);
      expect(
        (await env.services.views.get(env.account.id, device.id)).device.shared_hardware_uuid,
      ).toBe(true);
    });

    it("answers not found for another account's device", async () => {
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      const { device } = await env.services.activation.activate(other.id, {
        device: { name: "Vendor Scale" },
      });
      await expect(env.services.views.get(env.account.id, device.id)).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
    });
  });

  describe("device list filters", () => {
    it("status=shipped is Dropshipped, In Transit and Out for Delivery, not Available for Pickup", async () => {
      const a = env.account.id;
      const ids: Record<string, string> = {};
      for (const status of [
        "Dropshipped",
        "In Transit",
        "Out for Delivery",
        "Available for Pickup",
        "Delivered",
      ]) {
        const { device } = await activate(env, { device: { name: "Vendor Scale" } });
        await env.store.devices.update(a, device.id, { status });
        ids[status] = device.id;
      }
      const shipped = await env.services.views.list(a, { status: "shipped" }, { count: true });
      expect(shipped.total).toBe(3);
      expect(shipped.rows.map((r) => r.status)).toEqual([
        "Dropshipped",
        "In Transit",
        "Out for Delivery",
      ]);
      const pickup = await env.services.views.list(a, { status: "Available for Pickup" });
      expect(pickup.rows.map((r) => r.id)).toEqual([ids["Available for Pickup"]]);
    });

    it("filters by patient, hardware uuid (exact and iexact), properties and search", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device: one } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const { device: two } = await activate(env, {
        device: { name: "Vendor Glucometer" },
        patient: { external_id: "P-2" },
      });
      const hook = await env.store.webhooks.create(a, {
        endpoint: "https://x.example/m",
        event: "MEASUREMENT",
      });
      await env.services.properties.set(a, two.id, {
        key: "measurement_webhook_id",
        value: hook.id,
      });
      const ids = async (query: Record<string, string | string[]>) =>
        (await env.services.views.list(a, query)).rows.map((r) => r.id);
      expect(await ids({ patient__external_id: "P-2" })).toEqual([two.id]);
      expect(await ids({ device__hardware_uuid: GW })).toEqual([one.id]);
      expect(await ids({ device__hardware_uuid: GW.toLowerCase() })).toEqual([]);
      expect(await ids({ device__hardware_uuid__iexact: GW.toLowerCase() })).toEqual([one.id]);
      expect(
        await ids({ properties__key: "measurement_webhook_id", properties__value: hook.id }),
      ).toEqual([two.id]);
      expect(await ids({ properties__value: "nope" })).toEqual([]);
      expect(await ids({ search: "glucometer" })).toEqual([two.id]);
      // Empty values filter nothing; a repeated key takes its last value; unknown keys are ignored.
      expect(await ids({ status: "", colour: "red" })).toEqual([one.id, two.id]);
      expect(await ids({ patient__external_id: ["P-2", "P-1"] })).toEqual([one.id]);
      const page = await env.services.views.list(a, {}, { limit: 1, offset: 1, count: true });
      expect([page.total, page.rows.map((r) => r.id)]).toEqual([2, [two.id]]);
      const [withProps] = (await env.services.views.list(a, { patient__external_id: "P-2" })).rows;
      expect(withProps?.properties).toEqual([{ key: "measurement_webhook_id", value: hook.id }]);
    });
  });
}
