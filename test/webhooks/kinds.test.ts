import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AutoReorder } from "../../src/asr/auto-reorder.ts";
import { SupplyShipping } from "../../src/asr/supply-shipping.ts";
import type { WebhookRow } from "../../src/store/types-ingest.ts";
import { asrDeps } from "../api/asr-fixtures.ts";
import { expectConsumable, WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

const GW = "297056120BD7";
const GW2 = "FED091A643FF";
const BPM = "Vendor BPM - Wide Range";
const ADDRESS = { address: "12 Main Street", city: "Irvine", state: "CA", zip_code: "92614" };

/**
 * Fulfilment, special-order and patient webhooks for the events that exist today, from the API
 * through the outbox to a real receiver; every body as a strict consumer reads it.
 */
describe("fulfilment, special-order and patient webhooks", () => {
  let lab: WebhookLab;
  let receiver: Receiver;
  let hooks: Record<"FULFILLMENT" | "SPECIAL_ORDER" | "PATIENT", WebhookRow>;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of several shapes
  const bodies = (path: string): any[] => {
    const event = path.toUpperCase() as keyof typeof hooks;
    return expectConsumable(
      receiver.received.filter((r) => r.path === `/${path}`),
      hooks[event],
    );
  };

  beforeEach(async () => {
    lab = await WebhookLab.open();
    receiver = await Receiver.start();
    hooks = {
      FULFILLMENT: await lab.webhook({
        endpoint: receiver.url("/fulfillment"),
        event: "FULFILLMENT",
      }),
      SPECIAL_ORDER: await lab.webhook({
        endpoint: receiver.url("/special_order"),
        event: "SPECIAL_ORDER",
      }),
      PATIENT: await lab.webhook({ endpoint: receiver.url("/patient"), event: "PATIENT" }),
    };
    // A measurement webhook, to show nothing else goes there.
    await lab.webhook({ endpoint: receiver.url("/measurement") });
  });
  /** A BPM activated on GW, known to the lab, for patient P-9. */
  const bpmOnGateway = async () => {
    await lab.store.gateways.updateStatus(GW, {});
    const res = await lab.hwi("POST", "hwi-devices/", {
      device: { name: BPM, hardware_uuid: GW },
      patient: { external_id: "P-9" },
    });
    return res.json() as { id: string };
  };

  afterEach(async () => {
    await lab.close();
    await receiver.close();
  });

  it("fulfilment requests fire Ready to Ship or Client Action Required; an unlink fires Unlinked with the prior gateway", async () => {
    await lab.hwi("POST", "hwi-patients/", { external_id: "P-1", name: "Pat One", ...ADDRESS });
    const ready = await lab.hwi("POST", "hwi-devices/", {
      device: { name: BPM },
      patient: { external_id: "P-1" },
    });
    expect(ready.statusCode, ready.body).toBe(201);
    const blocked = await lab.hwi("POST", "hwi-devices/", {
      device: { name: "Vendor Scale" },
      patient: { external_id: "P-2" },
    });
    await lab.store.gateways.updateStatus(GW, {});
    const active = await lab.hwi("POST", "hwi-devices/", {
      device: { name: "Vendor Glucometer", hardware_uuid: GW },
      patient: { external_id: "P-1" },
    });
    expect(active.json().status).toBe("Active");
    const unlinked = await lab.hwi("POST", `unlink-gateway/${GW}/`);
    expect(unlinked.statusCode).toBe(200);
    await lab.settle();

    // Deliveries to one endpoint run side by side: their order of arrival is not promised.
    const got = new Map(bodies("fulfillment").map((b) => [b.status, b]));
    expect([...got.keys()].sort()).toEqual(["Client Action Required", "Ready to Ship", "Unlinked"]);
    expect(got.get("Ready to Ship")).toMatchObject({
      hwi_device_id: ready.json().id,
      patient_id: "P-1",
      device_name: BPM,
      sensor_code: "10",
      hardware_uuid: null,
      device_id: null,
    });
    expect(got.get("Client Action Required")?.hwi_device_id).toBe(blocked.json().id);
    // Spec 6.2: Unlinked carries the prior hardware uuid in device_id; hardware_uuid is null.
    expect(got.get("Unlinked")).toMatchObject({
      hwi_device_id: active.json().id,
      hardware_uuid: null,
      device_id: GW,
      patient_id: "P-1",
    });
    expect(receiver.received.filter((r) => r.path === "/measurement")).toEqual([]);
    expect(
      receiver.received.every((r) => r.headers["x-rpmlab-event"] === r.path.slice(1).toUpperCase()),
    ).toBe(true);
  });

  it("a supply order fires a special-order webhook when placed, shipped and delivered", async () => {
    await lab.store.accounts.update(lab.account.id, { asrEnabled: true });
    await lab.store.gateways.updateStatus(GW, {});
    const meter = await lab.hwi("POST", "hwi-devices/", {
      device: { name: "Vendor Glucometer", hardware_uuid: GW },
      patient: { external_id: "P-7" },
    });
    const shipping = new SupplyShipping({ ...asrDeps(lab), events: lab.events });
    await shipping.start();
    try {
      const order = await lab.asr("POST", "supply-requests/", {
        supply_name: "Glucometer Test Strips (100)",
        gateway_id: GW,
        shipping_name: "Pat Seven",
        shipping_address: ADDRESS.address,
        shipping_city: ADDRESS.city,
        shipping_state: ADDRESS.state,
        shipping_zip_code: ADDRESS.zip_code,
        notify_emails: "care@example.com",
      });
      expect(order.statusCode, order.body).toBe(201);
      await lab.runUntil(lab.clock.now() + 14 * 86_400_000);
      await shipping.whenIdle();
      await lab.settle();
    } finally {
      await shipping.stop();
    }
    const orders = bodies("special_order").sort((a, b) => (a.updated_on < b.updated_on ? -1 : 1));
    expect(orders.map((o) => [o.status, o.shipped_on !== null, o.delivered_on !== null])).toEqual([
      ["pending", false, false],
      ["fulfilled", true, false],
      ["fulfilled", true, true],
    ]);
    expect(orders[2]).toMatchObject({
      order_type: "supply",
      supply_name: "Glucometer Test Strips (100)",
      strips: 100,
      gateway_id: GW,
      patient_id: "P-7",
      notify_emails: "care@example.com",
    });
    expect(orders[0].related_client_device_id).toBeNull();
    expect(meter.statusCode).toBe(201);
    // One delivery per step, each posted once.
    const ids = receiver.received
      .filter((r) => r.path === "/special_order")
      .map((r) => r.headers["x-rpmlab-delivery"]);
    expect(new Set(ids).size).toBe(3);
  });

  it("an automatic reorder fires a special-order webhook for the meter, to its patient's address", async () => {
    await lab.store.accounts.update(lab.account.id, { asrEnabled: true });
    await lab.store.asrSettings.setAutoReorder(lab.account.id, {
      stripsBelow: 60,
      daysBelow: null,
      supplyName: "Glucometer Test Strips (50)",
    });
    await lab.hwi("POST", "hwi-patients/", { external_id: "P-5", name: "Pat Five", ...ADDRESS });
    await lab.store.gateways.updateStatus(GW, {});
    const meter = await lab.hwi("POST", "hwi-devices/", {
      device: { name: "Vendor Glucometer", hardware_uuid: GW },
      patient: { external_id: "P-5" },
    });
    const reorder = new AutoReorder(asrDeps(lab));
    // The meter's own box, 50 strips, is below 60.
    expect(await reorder.sweep()).toEqual({ placed: 1, unshippable: 0 });
    await lab.settle();
    const [order] = bodies("special_order");
    expect(order).toMatchObject({
      order_type: "supply",
      status: "pending",
      auto_reorder: true,
      supply_name: "Glucometer Test Strips (50)",
      related_client_device_id: meter.json().id,
      patient_id: "P-5",
      gateway_id: GW,
      imei: "",
      shipping_name: "Pat Five",
      shipping_address: ADDRESS.address,
      shipping_zip_code: ADDRESS.zip_code,
    });
  });

  it("a replacement order fires special-order webhooks; its gateway shipping fires Replaced", async () => {
    const device = await bpmOnGateway();
    const order = await lab.hwi("POST", "hwi-replacements/", {
      hwi_device_id: device.id,
      device_types: [{ name: "Gateway" }],
      shipping_name: "Pat Nine",
      shipping_address: ADDRESS.address,
      shipping_city: ADDRESS.city,
      shipping_state: ADDRESS.state,
      shipping_zip_code: ADDRESS.zip_code,
    });
    expect(order.statusCode).toBe(201);
    lab.clock.runSync({ until: lab.clock.now() + 60_000 });
    await lab.devices.replacementShipping.ship(lab.account.id, order.json().id, {
      hardwareUuid: GW2,
    });
    await lab.settle();

    const orders = bodies("special_order").sort((a, b) => (a.updated_on < b.updated_on ? -1 : 1));
    expect(orders.map((o) => o.status)).toEqual(["Ready to Ship", "Dropshipped"]);
    expect(orders[0]).toMatchObject({
      id: order.json().id,
      order_type: "replacement",
      hwi_device_id: device.id,
      patient_id: "P-9",
      device_types: [{ name: "Gateway" }],
      previous_hardware_uuid: GW,
      new_hardware_uuid: null,
      shipped_on: null,
      delivered_on: null,
    });
    expect(orders[1]).toMatchObject({ new_hardware_uuid: GW2, shipped_on: orders[1].updated_on });
    expect(orders[1].created_on).toBe(orders[0].created_on);
    const replaced = bodies("fulfillment").filter((b) => b.status === "Replaced");
    expect(replaced).toEqual([
      expect.objectContaining({ hwi_device_id: device.id, hardware_uuid: GW2, device_id: GW }),
    ]);
  });

  it("a replacement an unlink stops fires an Unlinked special-order webhook, as its read says", async () => {
    const device = await bpmOnGateway();
    const order = await lab.hwi("POST", "hwi-replacements/", {
      hwi_device_id: device.id,
      device_types: [{ name: "Gateway" }],
    });
    expect(order.statusCode).toBe(201);
    lab.clock.runSync({ until: lab.clock.now() + 60_000 });
    expect((await lab.hwi("POST", `unlink-gateway/${device.id}/`)).statusCode).toBe(200);
    await lab.settle();

    const read = await lab.hwi("GET", `hwi-replacements/${order.json().id}/`);
    expect(read.json().status).toBe("Unlinked");
    const orders = bodies("special_order").sort((a, b) => (a.updated_on < b.updated_on ? -1 : 1));
    expect(orders.map((o) => o.status)).toEqual(["Ready to Ship", "Unlinked"]);
    expect(orders[1]).toMatchObject({
      id: order.json().id,
      hwi_device_id: device.id,
      patient_id: "P-9",
      updated_on: read.json().updated_on,
      shipped_on: null,
      delivered_on: null,
    });
    expect(bodies("fulfillment").map((b) => [b.status, b.device_id])).toEqual([["Unlinked", GW]]);
  });

  it("patients: created, updated (a rename says so), deleted; a refused write sends nothing", async () => {
    expect(
      (await lab.hwi("POST", "hwi-patients/", { external_id: "P-1", ...ADDRESS })).statusCode,
    ).toBe(201);
    expect((await lab.hwi("POST", "hwi-patients/", { external_id: "p-1" })).statusCode).toBe(400);
    lab.clock.runSync({ until: lab.clock.now() + 1000 });
    expect((await lab.hwi("PATCH", "hwi-patients/P-1/", { name: "Pat" })).statusCode).toBe(200);
    expect(
      (await lab.hwi("PUT", "hwi-patients/P-1/", { external_id: "P-2", name: "Pat" })).statusCode,
    ).toBe(200);
    expect((await lab.hwi("DELETE", "hwi-patients/P-2/")).statusCode).toBe(204);
    expect((await lab.hwi("DELETE", "hwi-patients/P-2/")).statusCode).toBe(404);
    await lab.settle();

    const got = bodies("patient");
    const key = (b: (typeof got)[number]) => `${b.action} ${b.patient_id} ${b.previous_patient_id}`;
    expect(got.map(key).sort()).toEqual([
      "created P-1 null",
      "deleted P-2 null",
      "updated P-1 null",
      "updated P-2 P-1",
    ]);
    const one = (k: string) => got.find((b) => key(b) === k)!;
    expect(one("created P-1 null").patient).toMatchObject({
      external_id: "P-1",
      address_status: "Verified",
    });
    expect(one("updated P-1 null").patient.name).toBe("Pat");
    // PUT: fields left out returned to their defaults; the delete carries the record as it was.
    expect(one("deleted P-2 null").patient).toMatchObject({
      external_id: "P-2",
      name: "Pat",
      address: null,
    });
    expect(one("updated P-1 null").timestamp > one("created P-1 null").timestamp).toBe(true);
    const logged = await lab.deliveries();
    expect(logged.filter((d) => d.event === "PATIENT").every((d) => d.state === "delivered")).toBe(
      true,
    );
  });

  it("patients written through devices: a new nested patient is created, a PUT of its fields updates it", async () => {
    const device = await lab.hwi("POST", "hwi-devices/", {
      device: { name: BPM },
      patient: { external_id: "P-7" },
    });
    expect(device.statusCode, device.body).toBe(201);
    // Linking a second device to the same patient creates nothing.
    await lab.hwi("POST", "hwi-devices/", {
      device: { name: "Vendor Scale" },
      patient: { external_id: "P-7" },
    });
    lab.clock.runSync({ until: lab.clock.now() + 1000 });
    const put = await lab.hwi("PUT", `hwi-devices/${device.json().id}/`, {
      patient: { name: "Pat Seven", phone_number: "+15555550107" },
    });
    expect(put.statusCode, put.body).toBe(200);
    await lab.settle();

    const got = bodies("patient");
    expect(got.map((b) => `${b.action} ${b.patient_id}`)).toEqual(
      expect.arrayContaining(["created P-7", "updated P-7"]),
    );
    expect(got).toHaveLength(2);
    const created = got.find((b) => b.action === "created")!;
    expect(created.patient).toMatchObject({ external_id: "P-7", name: null });
    const updated = got.find((b) => b.action === "updated")!;
    expect(updated.patient).toMatchObject({ name: "Pat Seven", phone_number: "+15555550107" });
  });
});
