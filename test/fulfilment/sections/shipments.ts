import { describe, expect, it } from "vitest";
import { utcWeekday } from "../../../src/fulfilment/business-time.ts";
import { fulfilmentWebhookBody } from "../../../src/fulfilment/events.ts";
import {
  DAY,
  drive,
  eventsOf,
  type FulfilmentEnv,
  GW,
  knownGateway,
  request,
  startSimulator,
  statusesOf,
  T0,
  useConfig,
} from "../env.ts";

const HOUR = 3_600_000;
const SHIPPED = ["Dropshipped", "In Transit", "Out for Delivery"];

/** Issue 4 §2: a request's shipment, as an integrator sees it through webhooks and reads. */
export function shipmentsSection(env: FulfilmentEnv): void {
  describe("shipments", () => {
    it("ships a request: Ready to Ship → Dropshipped → In Transit (scans) → Out for Delivery → Delivered", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      const { device } = await request(env);
      expect(device.status).toBe("Ready to Ship");
      await drive(env, sim, T0 + 30 * DAY);

      const statuses = statusesOf(env, device.id);
      const scans = statuses.filter((s) => s === "In Transit").length;
      expect(scans).toBeGreaterThanOrEqual(env.config.inTransitScans.min);
      expect(scans).toBeLessThanOrEqual(env.config.inTransitScans.max);
      expect(statuses).toEqual([
        "Ready to Ship",
        "Dropshipped",
        ...Array(scans).fill("In Transit"),
        "Out for Delivery",
        "Delivered",
      ]);
      const events = eventsOf(env, "fulfilment.status").filter((e) => e.device.id === device.id);
      const at = (status: string) => events.find((e) => e.status === status)!.at;
      // Times never go back; 1–2 business days to ship (T0 is a Wednesday), 2–5 days in transit.
      expect(events.map((e) => e.at)).toEqual([...events.map((e) => e.at)].sort((x, y) => x - y));
      expect(at("Dropshipped") - T0).toBeGreaterThanOrEqual(DAY);
      expect(at("Dropshipped") - T0).toBeLessThanOrEqual(2 * DAY + 2 * DAY);
      expect([1, 2, 3, 4, 5]).toContain(utcWeekday(at("Dropshipped")));
      const inTransit = at("Out for Delivery") - events.find((e) => e.status === "In Transit")!.at;
      expect(inTransit).toBeGreaterThanOrEqual(0.7 * 2 * DAY);
      expect(inTransit).toBeLessThanOrEqual(1.3 * 5 * DAY);

      // The shipped gateway: the account's, shipped_on at Dropshipped; the device is on it.
      const shipped = (await env.store.devices.get(a, device.id))!;
      expect(shipped.status).toBe("Delivered");
      const gateway = shipped.hardwareUuid!;
      expect(gateway).toMatch(/^[0-9A-F]{12}$/);
      expect(await env.store.gateways.getForAccount(a, gateway)).toMatchObject({
        shippedOn: at("Dropshipped"),
      });
      const logs = (await env.store.hardwareLogs.list(a, { deviceId: device.id })).rows;
      expect(logs.map((l) => [l.reason, l.previousHardwareUuid, l.hardwareUuid])).toEqual([
        ["shipment", null, gateway],
      ]);

      // Webhooks from Dropshipped on carry the tracking link and the gateway.
      const bodies = events.map(fulfilmentWebhookBody);
      expect(bodies[0]).toMatchObject({ status: "Ready to Ship", tracking_link: null });
      const link = bodies[1]!.tracking_link!;
      expect(link).toMatch(/^https:\/\/tracking\.rpmlab\.test\/(ups|fedex|usps)\/[0-9A-Z]{12,22}$/);
      for (const body of bodies.slice(1)) {
        expect(body).toMatchObject({
          tracking_link: link,
          hardware_uuid: gateway,
          device_id: null,
        });
      }

      // Delivered: the hardware is with the patient (scenarios power it on), billing starts.
      expect(eventsOf(env, "hardware.delivered")).toMatchObject([
        {
          accountId: a,
          orderId: device.id,
          kind: "device",
          via: "doorstep",
          patientExternalId: "P-1",
          gatewayUuid: gateway,
          devices: [{ id: device.id, hardwareUuid: gateway }],
          signedBy: null,
          at: at("Delivered"),
        },
      ]);
      expect(await env.store.billingPeriods.list({ accountId: a })).toMatchObject([
        { deviceId: device.id, started: at("Delivered"), ended: null, basis: "delivery" },
      ]);

      // The order: contents, carrier details, special-order dates, history.
      const order = await env.services.orders.get(device.id);
      expect(order).toMatchObject({
        kind: "device",
        status: "Delivered",
        ships_device: true,
        ships_gateway: true,
        hardware_uuid: gateway,
        tracking_link: link,
        shipped_on: at("Dropshipped"),
        delivered_on: at("Delivered"),
        delivered_via: "doorstep",
        next_status: null,
        next_at: null,
      });
      expect(order.expected_delivery).toBeGreaterThanOrEqual(at("Delivered") - 12 * HOUR);
      expect(order.history.map((h) => h.status)).toEqual(statuses);
      expect(order.history.filter((h) => h.status === "In Transit").every((h) => h.location)).toBe(
        true,
      );
      expect(sim.armed).toBe(0);
    });

    it("shows shipped devices in status=shipped while on the way, not before nor after", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      const { device } = await request(env);
      const shipped = async () =>
        (await env.services.views.list(a, { status: "shipped" })).rows.map((d) => d.status);
      expect(await shipped()).toEqual([]);
      const seen = new Set<string>();
      for (let t = T0; t < T0 + 20 * DAY; t += 2 * HOUR) {
        await drive(env, sim, t);
        for (const status of await shipped()) seen.add(status);
      }
      expect([...seen].sort()).toEqual([...SHIPPED].sort());
      expect((await env.store.devices.get(a, device.id))?.status).toBe("Delivered");
      expect(await shipped()).toEqual([]);
    });

    it("goes On Hold on a stock shortage, then Ready to Ship when stock arrives", async () => {
      useConfig(env, { probabilities: { stock_shortage: 1 }, durations: { restock: "3d" } });
      const sim = await startSimulator(env);
      const { device } = await request(env);
      expect(device.status).toBe("On Hold");
      await drive(env, sim, T0 + 2 * DAY);
      expect(statusesOf(env, device.id)).toEqual(["On Hold"]);
      await drive(env, sim, T0 + 30 * DAY);
      const statuses = statusesOf(env, device.id);
      expect(statuses.slice(0, 3)).toEqual(["On Hold", "Ready to Ship", "Dropshipped"]);
      const rts = eventsOf(env, "fulfilment.status").find((e) => e.status === "Ready to Ship")!;
      expect(rts.at).toBe(T0 + 3 * DAY);
      expect(statuses.at(-1)).toBe("Delivered");
    });

    it("retries failed deliveries, then holds the package for pickup: no Delivered, pickup is silent", async () => {
      useConfig(env, { probabilities: { delivery_issue: 1 }, max_delivery_attempts: 2 });
      const a = env.account.id;
      const sim = await startSimulator(env);
      const { device } = await request(env);
      await drive(env, sim, T0 + 40 * DAY);
      const statuses = statusesOf(env, device.id);
      expect(statuses.slice(statuses.indexOf("Out for Delivery"))).toEqual([
        "Out for Delivery",
        "Delivery Issue",
        "Out for Delivery",
        "Delivery Issue",
        "Available for Pickup",
      ]);
      expect(statuses).not.toContain("Delivered");
      expect((await env.store.devices.get(a, device.id))?.status).toBe("Available for Pickup");
      // The patient collected it: the lab knows (scenarios power on), the client gets no webhook.
      const [handed] = eventsOf(env, "hardware.delivered");
      expect(handed).toMatchObject({ via: "pickup", orderId: device.id });
      const order = await env.services.orders.get(device.id);
      expect(order).toMatchObject({ status: "Available for Pickup", delivered_via: "pickup" });
      expect(order.delivered_on).toBe(handed!.at);
      expect(order.history.at(-1)).toMatchObject({ status: "Picked Up", at: handed!.at });
      expect(await env.store.billingPeriods.list({ accountId: a })).toMatchObject([
        { deviceId: device.id, started: handed!.at, basis: "pickup" },
      ]);
      const pickup = await env.services.views.list(a, { status: "shipped" });
      expect(pickup.rows).toEqual([]);
    });

    it("holds a package at the carrier's facility after its last scan (carrier hold)", async () => {
      useConfig(env, { probabilities: { carrier_hold: 1 } });
      const sim = await startSimulator(env);
      const { device } = await request(env);
      await drive(env, sim, T0 + 30 * DAY);
      const statuses = statusesOf(env, device.id);
      expect(statuses.at(-1)).toBe("Available for Pickup");
      expect(statuses.at(-2)).toBe("In Transit");
      expect(statuses).not.toContain("Out for Delivery");
      expect(statuses).not.toContain("Delivered");
      const order = await env.services.orders.get(device.id);
      expect(order.history.find((h) => h.status === "Available for Pickup")).toMatchObject({
        location: "Irvine, CA",
      });
    });

    it("require_signature: proof of delivery, and more failed attempts (nobody home to sign)", async () => {
      useConfig(env, { probabilities: { delivery_issue: 0, delivery_issue_signature: 1 } });
      const sim = await startSimulator(env);
      const signed = await request(env, "P-1", { require_signature: true });
      const plain = await request(env, "P-2", {}, "Vendor Scale");
      await drive(env, sim, T0 + 40 * DAY);
      expect(statusesOf(env, signed.device.id)).toContain("Delivery Issue");
      expect(statusesOf(env, plain.device.id)).not.toContain("Delivery Issue");
      expect(statusesOf(env, plain.device.id).at(-1)).toBe("Delivered");

      await sim.stop();
      useConfig(env, { probabilities: { delivery_issue_signature: 0 } });
      const sim2 = await startSimulator(env);
      const again = await request(env, "P-3", { require_signature: "true" }, "Vendor Pulse Ox");
      await drive(env, sim2, env.clock.now() + 30 * DAY);
      const order = await env.services.orders.get(again.device.id);
      expect(order).toMatchObject({
        status: "Delivered",
        require_signature: true,
        signed_by: "PAT ONE",
      });
      expect(order.history.at(-1)!.detail).toBe("Delivered, signed for by PAT ONE");
      const delivered = eventsOf(env, "hardware.delivered").find(
        (e) => e.orderId === again.device.id,
      );
      expect(delivered?.signedBy).toBe("PAT ONE");
    });

    it("ship_gateway_only ships and bills a gateway only; a second device joins the patient's gateway", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      const only = await request(env, "P-1", { ship_gateway_only: true });
      await drive(env, sim, T0 + 30 * DAY);
      const gatewayOrder = await env.services.orders.get(only.device.id);
      expect(gatewayOrder).toMatchObject({ ships_device: false, ships_gateway: true });
      expect(eventsOf(env, "hardware.delivered")).toMatchObject([
        // The patient has the device (spec 2.4): it is in use once the gateway is here.
        {
          orderId: only.device.id,
          devices: [{ id: only.device.id }],
          gatewayUuid: gatewayOrder.hardware_uuid,
        },
      ]);

      const second = await request(env, "P-1", {}, "Vendor Scale");
      await drive(env, sim, env.clock.now() + 30 * DAY);
      const deviceOrder = await env.services.orders.get(second.device.id);
      expect(deviceOrder).toMatchObject({
        ships_device: true,
        ships_gateway: false,
        hardware_uuid: gatewayOrder.hardware_uuid,
      });
      expect((await env.store.devices.get(a, second.device.id))?.hardwareUuid).toBe(
        gatewayOrder.hardware_uuid,
      );
      const report = await env.services.billing({ from: "2024-10-01", to: "2024-12-31" });
      expect(report.accounts[0]!.hardware_shipped).toEqual({ devices: 1, gateways: 1 });
    });

    it("ships a direct-cellular device with a new IMEI", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      const { device } = await request(env, "P-1", {}, "Vendor Cellular BPM");
      await drive(env, sim, T0 + 30 * DAY);
      const shipped = (await env.store.devices.get(a, device.id))!;
      expect(shipped.hardwareUuid).toMatch(/^35\d{13}$/);
      expect(await env.services.orders.get(device.id)).toMatchObject({
        ships_device: true,
        ships_gateway: false,
        status: "Delivered",
      });
      expect(eventsOf(env, "hardware.delivered")).toMatchObject([
        { gatewayUuid: null, devices: [{ id: device.id, hardwareUuid: shipped.hardwareUuid }] },
      ]);
    });

    it("accepts the deprecated delivery types and ships them with default options", async () => {
      const sim = await startSimulator(env);
      const priority = await request(env, "P-1", { delivery_type: "Priority" });
      const shipping = await request(env, "P-2", { delivery_type: "Shipping" }, "Vendor Scale");
      const plain = await request(env, "P-3", {}, "Vendor Glucometer");
      await drive(env, sim, T0 + 30 * DAY);
      for (const { device } of [priority, shipping, plain]) {
        expect(statusesOf(env, device.id).at(-1)).toBe("Delivered");
        expect(await env.services.orders.get(device.id)).toMatchObject({
          require_signature: false,
          signed_by: null,
        });
      }
      expect((await env.services.orders.get(priority.device.id)).delivery_type).toBe("Priority");
    });

    it("cleans up a duplicate held in Client Action Required: Cancelled, the order removed", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      const first = await request(env);
      const duplicate = await request(env);
      expect(duplicate.device.status).toBe("Client Action Required");
      await drive(env, sim, T0 + 2 * DAY);
      expect(statusesOf(env, duplicate.device.id)).toEqual(["Client Action Required"]);
      await drive(env, sim, T0 + 4 * DAY);
      expect(statusesOf(env, duplicate.device.id)).toEqual(["Client Action Required", "Cancelled"]);
      const cancelled = eventsOf(env, "fulfilment.status").find((e) => e.status === "Cancelled")!;
      expect(cancelled).toMatchObject({ patientExternalId: "P-1", at: T0 + 1000 + 3 * DAY });
      expect(fulfilmentWebhookBody(cancelled)).toMatchObject({
        hwi_device_id: duplicate.device.id,
        status: "Cancelled",
      });
      // Spec 3: "order is removed and no status is stored; the webhook is the only record".
      expect(await env.store.devices.get(a, duplicate.device.id)).toBeNull();
      expect(await env.store.shipments.get(duplicate.device.id)).toBeNull();
      await expect(env.services.orders.get(duplicate.device.id)).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
      expect((await env.store.devices.get(a, first.device.id))?.status).not.toBe("Cancelled");
    });

    it("lets the earliest duplicate go ahead once the request it duplicated is cancelled", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      // No address yet: the first request waits for it, the next two are its duplicates.
      await env.store.patients.create(a, { externalId: "P-1", name: "Pat One" });
      const first = await request(env);
      const [one, two] = [await request(env), await request(env)];
      for (const r of [first, one, two]) expect(r.device.status).toBe("Client Action Required");
      await env.services.orders.advance(first.device.id, { status: "Cancelled" });
      // The first duplicate is the patient's request now: it waits for the address, and the
      // duplicate clean-up passes it by; the second is its duplicate and goes.
      const reason = (await env.services.orders.get(one.device.id)).reason;
      expect(reason).toMatch(/address is incomplete/);
      await drive(env, sim, T0 + 5 * DAY);
      expect(statusesOf(env, one.device.id)).toEqual([
        "Client Action Required",
        "Client Action Required",
      ]);
      expect(statusesOf(env, two.device.id).at(-1)).toBe("Cancelled");
      await env.store.patients.update(a, "P-1", {
        address: "12 Main Street",
        city: "Irvine",
        state: "CA",
        zipCode: "92614",
        addressStatus: "Verified",
      });
      expect(await env.services.reviewRequests(a, "P-1")).toBe(1);
      await drive(env, sim, env.clock.now() + 30 * DAY);
      expect(statusesOf(env, one.device.id).at(-1)).toBe("Delivered");
    });

    it("a request held for its address ships once the patient's address is fixed", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      await env.store.patients.create(a, { externalId: "P-1", name: "Pat One" });
      const { device } = await request(env);
      expect(device.status).toBe("Client Action Required");
      await drive(env, sim, T0 + 10 * DAY);
      expect(statusesOf(env, device.id)).toEqual(["Client Action Required"]);
      await env.services.update.update(a, device.id, {
        patient: {
          address: "12 Main Street",
          city: "Irvine",
          state: "CA",
          zip_code: "92614",
        },
      });
      await drive(env, sim, env.clock.now() + 30 * DAY);
      const statuses = statusesOf(env, device.id);
      expect(statuses.slice(0, 3)).toEqual([
        "Client Action Required",
        "Ready to Ship",
        "Dropshipped",
      ]);
      expect(statuses.at(-1)).toBe("Delivered");
    });

    it("holds an accepted request again when the patient's address fails verification before it ships, then ships it once fixed", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      const { device } = await request(env);
      const accepted = device.status;
      expect(["Ready to Ship", "On Hold"]).toContain(accepted);
      await env.store.patients.update(a, "P-1", {
        address: "PO Box 12",
        addressStatus: "Invalid",
      });
      expect(await env.services.reviewRequests(a, "P-1")).toBe(0);
      expect(statusesOf(env, device.id)).toEqual([accepted, "Client Action Required"]);
      const order = await env.services.orders.get(device.id);
      expect(order).toMatchObject({ status: "Client Action Required", next_status: null });
      // Nothing ships to the address that failed verification, however long it waits.
      await drive(env, sim, env.clock.now() + 30 * DAY);
      expect(statusesOf(env, device.id)).toEqual([accepted, "Client Action Required"]);
      await env.store.patients.update(a, "P-1", {
        address: "12 Main Street",
        addressStatus: "Verified",
      });
      expect(await env.services.reviewRequests(a, "P-1")).toBe(1);
      await drive(env, sim, env.clock.now() + 30 * DAY);
      expect(statusesOf(env, device.id).at(-1)).toBe("Delivered");
    });

    it("an Unlinked webhook carries the tracking link of the device's box that shipped (wire-formats fulfilment webhook)", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      await knownGateway(env);
      const inHand = await env.services.activation.activate(a, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
        patient: { external_id: "P-2" },
      });
      // On the same gateway: the replacement ordered for the scale moves it too.
      const beside = await env.services.activation.activate(a, {
        device: { name: "Vendor Pulse Ox", hardware_uuid: GW },
        patient: { external_id: "P-2" },
      });
      const { device } = await request(env);
      const replaced = await env.services.replacements.create(a, {
        hwi_device_id: inHand.device.id,
        device_types: [{ name: "Gateway" }],
      });
      await drive(env, sim, T0 + 3 * DAY);
      const order = await env.services.orders.get(device.id);
      expect(SHIPPED).toContain(order.status);
      const replacement = await env.services.replacements.get(a, replaced.id);
      expect(replacement.tracking_link).not.toBeNull();
      await env.services.unlink.unlink(a, device.id);
      await env.services.unlink.unlink(a, replacement.new_hardware_uuid!);
      const unlinked = eventsOf(env, "fulfilment.status")
        .filter((e) => e.status === "Unlinked")
        .map(fulfilmentWebhookBody);
      expect(unlinked).toMatchObject([
        { hwi_device_id: device.id, tracking_link: order.tracking_link },
        // Activated in hand, their gateway since replaced: the replacement's box, whose link
        // their Replaced webhooks carried.
        { hwi_device_id: inHand.device.id, tracking_link: replacement.tracking_link },
        { hwi_device_id: beside.device.id, tracking_link: replacement.tracking_link },
      ]);
      // Activated in hand and never shipped anything: no link.
      const bare = await env.services.activation.activate(a, {
        device: { name: "Vendor Cellular BPM", hardware_uuid: "356938035643809" },
      });
      await env.services.unlink.unlink(a, bare.device.id);
      expect(fulfilmentWebhookBody(eventsOf(env, "fulfilment.status").at(-1)!)).toMatchObject({
        hwi_device_id: bare.device.id,
        status: "Unlinked",
        tracking_link: null,
      });
    });

    it("stops an unlinked device's shipment and its billing", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      await knownGateway(env);
      const inHand = await env.services.activation.activate(a, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const { device } = await request(env);
      await drive(env, sim, T0 + 3 * DAY);
      const order = await env.services.orders.get(device.id);
      expect(SHIPPED).toContain(order.status);
      await env.services.unlink.unlink(a, device.id);
      await env.services.unlink.unlink(a, GW);
      const unlinkedAt = env.clock.now();
      await drive(env, sim, T0 + 30 * DAY);
      expect(statusesOf(env, device.id).at(-1)).toBe("Unlinked");
      expect(await env.services.orders.get(device.id)).toMatchObject({
        halted: "unlinked",
        next_status: null,
      });
      expect(eventsOf(env, "hardware.delivered")).toEqual([]);
      expect(await env.store.billingPeriods.list({ accountId: a })).toMatchObject([
        { deviceId: inHand.device.id, started: T0, ended: unlinkedAt, basis: "activation" },
      ]);
      expect(sim.armed).toBe(0);
    });
  });
}
