import { describe, expect, it } from "vitest";
import {
  activate,
  eventsOf,
  type FulfilmentEnv,
  fieldErrors,
  GW,
  IMEI,
  knownGateway,
  request,
  T0,
} from "../env.ts";

/** Spec 4.3 replacement orders; wire-formats "Replacements". */
export function replacementsSection(env: FulfilmentEnv): void {
  const create = (body: unknown) => env.services.replacements.create(env.account.id, body);

  describe("replacement requests", () => {
    it("records a request and keeps the original device as it is (no new device, no duplicate flag)", async () => {
      const a = env.account.id;
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor BPM - Wide Range", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      env.recorded.length = 0;
      const replacement = await create({
        hwi_device_id: device.id,
        device_types: [{ name: "Vendor BPM - L" }, { name: "Gateway" }, { name: "Gateway" }],
        shipping_name: "Pat One",
        shipping_address: "12 Main Street",
        shipping_city: "Irvine",
        shipping_state: "CA",
        shipping_zip_code: "92614",
        notify_emails: "a@example.com, b@example.com",
      });
      expect(replacement).toMatchObject({
        deviceId: device.id,
        deviceTypes: ["Vendor BPM - Wide Range", "Gateway"],
        shippingState: "CA",
        notifyEmails: "a@example.com, b@example.com",
        previousHardwareUuid: GW,
        newHardwareUuid: null,
        status: "Ready to Ship",
      });
      expect((await env.store.devices.list(a)).rows).toEqual([
        await env.store.devices.get(a, device.id),
      ]);
      expect((await env.store.devices.get(a, device.id))?.status).toBe("Active");
      expect(eventsOf(env, "fulfilment.status")).toEqual([]);
      expect(eventsOf(env, "replacement.status")).toMatchObject([
        { accountId: a, status: "Ready to Ship" },
      ]);
      const { rows } = await env.services.replacements.list(a);
      expect(rows).toEqual([
        {
          id: replacement.id,
          hwi_device_id: device.id,
          device_types: [{ name: "Vendor BPM - Wide Range" }, { name: "Gateway" }],
          shipping_name: "Pat One",
          shipping_address: "12 Main Street",
          shipping_city: "Irvine",
          shipping_state: "CA",
          shipping_zip_code: "92614",
          notify_emails: "a@example.com, b@example.com",
          status: "Ready to Ship",
          previous_hardware_uuid: GW,
          new_hardware_uuid: null,
          created: T0 + 1000,
          modified: T0 + 1000,
          // Spec 6.2: special-order reads carry these four dates.
          created_on: T0 + 1000,
          updated_on: T0 + 1000,
          shipped_on: null,
          delivered_on: null,
          tracking_link: null,
        },
      ]);
      expect(await env.services.replacements.get(a, replacement.id)).toEqual(rows[0]);
    });

    it("takes one of two identical replacement orders sent at the same time (a double submit), refusing the other by device_types", async () => {
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-1" },
      });
      const order = { hwi_device_id: device.id, device_types: [{ name: "Gateway" }] };
      const outcomes = await Promise.allSettled([create(order), create(order)]);
      expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
      const refused = outcomes.find((o) => o.status === "rejected")!;
      expect(await fieldErrors(Promise.reject(refused.reason))).toHaveProperty("device_types");
      expect((await env.services.replacements.list(env.account.id)).rows).toHaveLength(1);
    });

    it("takes no shipping fields for a replacement from bulk inventory, but not some of them", async () => {
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const bulk = await create({ hwi_device_id: device.id, device_types: [{ name: "Gateway" }] });
      expect(bulk).toMatchObject({ shippingName: null, shippingZipCode: null, notifyEmails: null });
      const fields = await fieldErrors(
        create({
          hwi_device_id: device.id,
          device_types: [{ name: "Vendor Scale" }],
          shipping_name: "Pat",
          shipping_city: "",
        }),
      );
      expect(Object.keys(fields).sort()).toEqual([
        "shipping_address",
        "shipping_city",
        "shipping_state",
        "shipping_zip_code",
      ]);
    });

    it("refuses unknown devices and device types that do not fit the device", async () => {
      await knownGateway(env);
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const { device: cell } = await activate(env, {
        device: { name: "Vendor Cellular BPM", hardware_uuid: IMEI },
      });
      const { device: pending } = await activate(env, { device: { name: "Vendor Scale" } });
      expect(await fieldErrors(create({ device_types: [{ name: "Gateway" }] }))).toEqual({
        hwi_device_id: ["This field is required."],
      });
      const unknownId = "e9c24a26-7d69-490f-9546-93c5a31486aa";
      expect(
        (
          await fieldErrors(
            create({ hwi_device_id: unknownId, device_types: [{ name: "Gateway" }] }),
          )
        ).hwi_device_id,
      ).toEqual([`Invalid pk "${unknownId}" - object does not exist.`]);
      expect(
        (await fieldErrors(create({ hwi_device_id: "x", device_types: [] }))).device_types,
      ).toEqual(["This list may not be empty."]);
      const types = async (id: string, names: string[]) =>
        (
          await fieldErrors(
            create({ hwi_device_id: id, device_types: names.map((name) => ({ name })) }),
          )
        ).device_types;
      expect(await types(device.id, ["Vendor Pulse Ox", "Toaster"])).toEqual([
        `Item 1: "Vendor Pulse Ox" is not the type of device ${device.id} (Vendor Scale); a replacement keeps the device's type.`,
        `Item 2: "Toaster" is not a valid device type: use "Gateway" or the device's type (Vendor Scale).`,
      ]);
      expect(await types(cell.id, ["Gateway"])).toEqual([
        "Item 1: Vendor Cellular BPM is a direct-cellular device: it has no gateway to replace.",
      ]);
      // Hardware the patient does not have: a request not shipped yet, an unlinked device.
      const refusedDevice = async (id: string, names: string[]) =>
        (
          await fieldErrors(
            create({ hwi_device_id: id, device_types: names.map((name) => ({ name })) }),
          )
        ).hwi_device_id;
      expect(await refusedDevice(pending.id, ["Vendor Scale"])).toEqual([
        `Device ${pending.id} has not shipped yet (${pending.status}): there is nothing to replace; cancel or wait for its order.`,
      ]);
      await env.services.unlink.unlink(env.account.id, GW);
      expect(await refusedDevice(device.id, ["Vendor Scale"])).toEqual([
        `Device ${device.id} is unlinked: it is no longer with a patient, there is nothing to replace.`,
      ]);
      expect(
        (await fieldErrors(create({ hwi_device_id: device.id, device_types: "Gateway" })))
          .device_types,
      ).toEqual(['Expected a list of items but got type "str".']);
      expect((await env.store.replacements.list(env.account.id)).rows).toEqual([]);
    });

    it("refuses a Gateway replacement for a device that joined a gateway whose own box is still on its way, keyed by device_types; takes it once that box is delivered", async () => {
      const { device: bpm } = await request(env);
      await env.services.orders.advance(bpm.id, { status: "Dropshipped" });
      const { device: scale } = await request(env, "P-1", {}, "Vendor Scale");
      await env.services.orders.advance(scale.id, { status: "Delivered" });
      const gateway = (await env.store.devices.get(env.account.id, bpm.id))!.hardwareUuid;
      expect((await env.store.devices.get(env.account.id, scale.id))!.hardwareUuid).toBe(gateway);
      for (const status of ["Dropshipped", "In Transit", "Out for Delivery", "Delivery Issue"]) {
        if (status !== "Dropshipped") await env.services.orders.advance(bpm.id, { status });
        // A new gateway would move the BPM, still in the mail, off the gateway in its box.
        const refused = await fieldErrors(
          create({ hwi_device_id: scale.id, device_types: [{ name: "Gateway" }] }),
        );
        expect(refused).toEqual({
          device_types: [
            `Item 1: the gateway ${gateway} of device ${scale.id} (in the box of device ${bpm.id}) has not reached the patient yet (${status}): there is nothing to replace; wait for its delivery.`,
          ],
        });
      }
      // The scale itself is with the patient.
      await create({ hwi_device_id: scale.id, device_types: [{ name: "Vendor Scale" }] });
      await env.services.orders.advance(bpm.id, { status: "Delivered" });
      await create({ hwi_device_id: scale.id, device_types: [{ name: "Gateway" }] });
    });
  });
}
