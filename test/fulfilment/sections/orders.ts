import { describe, expect, it } from "vitest";
import {
  advance,
  DAY,
  drive,
  eventsOf,
  type FulfilmentEnv,
  fieldErrors,
  GW,
  GW2,
  IMEI,
  request,
  startSimulator,
  statusesOf,
  T0,
} from "../env.ts";

/** Issue 4 §2 "Admin": advance an order, inject carrier events, list orders. */
export function ordersSection(env: FulfilmentEnv): void {
  const orders = () => env.services.orders;

  describe("orders (admin)", () => {
    it("advances an order through every status on the carrier's way, each announced, at the lab's time", async () => {
      const { device } = await request(env);
      env.clock.runSync({ until: T0 + 5 * 3_600_000 });
      const now = env.clock.now();
      const order = await orders().advance(device.id, { status: "Delivered" });
      expect(order).toMatchObject({ status: "Delivered", delivered_on: now, next_status: null });
      expect(statusesOf(env, device.id)).toEqual([
        "Ready to Ship",
        "Dropshipped",
        "In Transit",
        "Out for Delivery",
        "Delivered",
      ]);
      expect(
        eventsOf(env, "fulfilment.status")
          .slice(1)
          .every((e) => e.at === now && e.trackingLink === order.tracking_link),
      ).toBe(true);
      expect(eventsOf(env, "hardware.delivered")).toHaveLength(1);
    });

    it("takes a status in any case, as the list's filter does", async () => {
      const { device } = await request(env);
      const order = await orders().advance(device.id, { status: " in transit " });
      expect(order.status).toBe("In Transit");
      expect(statusesOf(env, device.id).at(-1)).toBe("In Transit");
    });

    it("refuses what no carrier could do, with a 400 keyed by the field that says why", async () => {
      const { device } = await request(env);
      expect(await fieldErrors(orders().advance(device.id, { status: "Shipped" }))).toEqual({
        status: [expect.stringMatching(/^"Shipped" is not a valid choice\. Fulfilment statuses: /)],
      });
      expect(await fieldErrors(orders().advance(device.id, { status: "Replaced" }))).toEqual({
        status: [expect.stringContaining("Replaced is not a carrier status")],
      });
      expect(await fieldErrors(orders().advance(device.id, {}))).toEqual({
        status: ["This field is required."],
      });
      expect(
        await fieldErrors(
          orders().advance(device.id, { status: "Ready to Ship", hardware_uuid: GW2 }),
        ),
      ).toEqual({ status: ["The order is already Ready to Ship."] });
      expect(
        await fieldErrors(orders().advance(device.id, { status: "On Hold", hardware_uuid: GW2 })),
      ).toEqual({ hardware_uuid: [expect.stringContaining("passes Dropshipped")] });
      await orders().advance(device.id, { status: "Available for Pickup" });
      expect(statusesOf(env, device.id)).toEqual([
        "Ready to Ship",
        "Dropshipped",
        "Available for Pickup",
      ]);
      expect(await fieldErrors(orders().advance(device.id, { status: "Delivered" }))).toEqual({
        status: [expect.stringContaining("never Delivered (spec 6.2)")],
      });
      // Asked for another status, the 400 answers that one, not Delivered.
      expect(await fieldErrors(orders().advance(device.id, { status: "In Transit" }))).toEqual({
        status: [
          "A package held for pickup cannot get to In Transit: it waits at the carrier's facility; inject the picked_up event when the patient collects it.",
        ],
      });
      expect(await fieldErrors(orders().inject(device.id, { event: "scan" }))).toEqual({
        event: [
          "A scan event cannot happen to an order in Available for Pickup. Possible now: picked_up.",
        ],
      });
      await orders().inject(device.id, { event: "picked_up" });
      // Collected, it waits nowhere: the 400 says the order is over, not to inject picked_up.
      expect(await fieldErrors(orders().advance(device.id, { status: "In Transit" }))).toEqual({
        status: [
          "The order was collected by the patient from the carrier's facility (it stays Available for Pickup): nothing moves it any more.",
        ],
      });
      expect(await fieldErrors(orders().inject(device.id, { event: "picked_up" }))).toEqual({
        event: [
          "A picked_up event cannot happen to an order in Available for Pickup (already with the patient). No carrier event can.",
        ],
      });
      expect(await fieldErrors(orders().inject(device.id, { event: "teleport" }))).toEqual({
        event: [
          expect.stringMatching(
            /^"teleport" is not a valid choice\. Carrier events \(any case\): scan, /,
          ),
        ],
      });
      await expect(orders().advance("nope", { status: "Delivered" })).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
    });

    it("a step refused on the way leaves the order where it was: no status moved, no webhook", async () => {
      const { device } = await request(env);
      await orders().advance(device.id, { status: "On Hold" });
      const before = statusesOf(env, device.id);
      expect(before).toEqual(["Ready to Ship", "On Hold"]);
      // On Hold → Ready to Ship → Dropshipped: the hardware_uuid is refused at Dropshipped.
      expect(
        await fieldErrors(
          orders().advance(device.id, { status: "Delivered", hardware_uuid: "zz" }),
        ),
      ).toEqual({ hardware_uuid: [expect.stringContaining("is not a gateway id")] });
      expect(statusesOf(env, device.id)).toEqual(before);
      expect((await orders().get(device.id)).status).toBe("On Hold");
      expect((await env.store.devices.get(env.account.id, device.id))?.status).toBe("On Hold");
    });

    it("ships the gateway the admin names, and injects carrier events with their details", async () => {
      const a = env.account.id;
      const { device } = await request(env);
      await orders().advance(device.id, {
        status: "Dropshipped",
        hardware_uuid: "fe-d0-91-a6-43-ff",
      });
      expect((await env.store.devices.get(a, device.id))?.hardwareUuid).toBe(GW2);
      expect((await env.store.gateways.getForAccount(a, GW2))?.shippedOn).toBe(env.clock.now());
      await orders().inject(device.id, { event: "scan", location: "Reno, NV", detail: "Departed" });
      await orders().advance(device.id, { status: "In Transit" });
      const order = await orders().inject(device.id, { event: "delivery_issue" });
      expect(order.status).toBe("Delivery Issue");
      expect(order.history.slice(-3)).toMatchObject([
        { status: "In Transit", location: "Reno, NV", detail: "Departed" },
        { status: "In Transit" },
        { status: "Delivery Issue" },
      ]);
      expect(order.next_status).toBe("Out for Delivery");
    });

    it("takes a carrier event by the status its webhook shows (spec 3), in any case and spelling", async () => {
      const { device } = await request(env);
      await orders().advance(device.id, { status: "Dropshipped" });
      expect((await orders().inject(device.id, { event: "In Transit" })).status).toBe("In Transit");
      expect((await orders().inject(device.id, { event: "IN_TRANSIT" })).status).toBe("In Transit");
      expect((await orders().inject(device.id, { event: "in_transit" })).status).toBe("In Transit");
      expect((await orders().inject(device.id, { event: "SCAN" })).status).toBe("In Transit");
      expect((await orders().inject(device.id, { event: "out for delivery" })).status).toBe(
        "Out for Delivery",
      );
      expect((await orders().inject(device.id, { event: "Available for Pickup" })).status).toBe(
        "Available for Pickup",
      );
      expect((await orders().inject(device.id, { event: " Picked Up " })).status).toBe(
        "Available for Pickup",
      );
      // The refusal names the event the admin meant, by its own name.
      expect(await fieldErrors(orders().inject(device.id, { event: "Delivered" }))).toEqual({
        event: [
          "A delivered event cannot happen to an order in Available for Pickup (already with the patient). No carrier event can.",
        ],
      });
      // An unknown name: the 400 lists every name accepted, the events and the statuses.
      expect(await fieldErrors(orders().inject(device.id, { event: "Shipped" }))).toEqual({
        event: [
          '"Shipped" is not a valid choice. Carrier events (any case): scan, out_for_delivery, delivery_issue, held_at_facility, delivered, picked_up, or the status each fires: In Transit, Out for Delivery, Delivery Issue, Available for Pickup, Delivered, Picked Up.',
        ],
      });
    });

    it("a gateway the admin names that is already out there is not shipped again: the device joins it", async () => {
      const a = env.account.id;
      const first = await request(env);
      const delivered = await orders().advance(first.device.id, { status: "Delivered" });
      const gateway = delivered.hardware_uuid!;
      const shippedOn = (await env.store.gateways.get(gateway))?.shippedOn;
      advance(env, DAY);
      const second = await request(env, "P-1", {}, "Vendor Scale");
      const order = await orders().advance(second.device.id, {
        status: "Dropshipped",
        hardware_uuid: gateway,
      });
      // Only the scale is in the box; the gateway stays the one shipped (spec 2.2) a day ago.
      expect(order).toMatchObject({ ships_device: true, ships_gateway: false });
      expect((await env.store.gateways.get(gateway))?.shippedOn).toBe(shippedOn);
      expect((await env.store.devices.get(a, second.device.id))?.hardwareUuid).toBe(gateway);
      await orders().advance(second.device.id, { status: "Delivered" });
      const report = await env.services.billing({});
      expect(report.accounts[0]?.hardware_shipped).toEqual({ devices: 2, gateways: 1 });
      expect(report.accounts[0]?.devices.map((d) => d.hwi_device_id)).toEqual([
        first.device.id,
        second.device.id,
      ]);
      // ship_gateway_only asks for a gateway in the box: one already out there cannot be it.
      const gatewayOnly = await request(
        env,
        "P-1",
        { ship_gateway_only: true },
        "Vendor Glucometer",
      );
      expect(
        await fieldErrors(
          orders().advance(gatewayOnly.device.id, {
            status: "Dropshipped",
            hardware_uuid: gateway,
          }),
        ),
      ).toEqual({
        hardware_uuid: [expect.stringContaining("ship_gateway_only ships a new gateway")],
      });
      expect((await env.store.gateways.get(gateway))?.shippedOn).toBe(shippedOn);
      // Another account's gateway stays refused, keyed as the admin sent it.
      const other = await env.store.accounts.create({
        clientDomain: "elsewhere",
        environment: "development",
      });
      await env.store.gateways.associate(other.id, GW, env.clock.now());
      await env.store.gateways.setShipped(GW, env.clock.now());
      const third = await request(env, "P-1", {}, "Vendor Pulse Ox");
      expect(
        await fieldErrors(
          orders().advance(third.device.id, { status: "Dropshipped", hardware_uuid: GW }),
        ),
      ).toEqual({ hardware_uuid: [expect.stringContaining("assigned to another account")] });
    });

    it("a named gateway or IMEI whose slot is taken is refused naming the device that has it", async () => {
      const scale = await request(env, "P-1", {}, "Vendor Cellular Scale");
      const bpm = await request(env, "P-1", {}, "Vendor Cellular BPM");
      await orders().advance(scale.device.id, { status: "Dropshipped", hardware_uuid: IMEI });
      expect(
        await fieldErrors(
          orders().advance(bpm.device.id, { status: "Dropshipped", hardware_uuid: IMEI }),
        ),
      ).toEqual({
        hardware_uuid: [
          `IMEI ${IMEI} is already the hardware of another device (Vendor Cellular Scale, hwi_device_id ${scale.device.id}); one device per IMEI.`,
        ],
      });
      const wide = await request(env, "P-2");
      const gateway = (await orders().advance(wide.device.id, { status: "Delivered" }))
        .hardware_uuid!;
      const small = await request(env, "P-2", {}, "Vendor BPM - S");
      expect(
        await fieldErrors(
          orders().advance(small.device.id, { status: "Dropshipped", hardware_uuid: gateway }),
        ),
      ).toEqual({
        hardware_uuid: [
          `Gateway ${gateway} already has a device with sensor code 10 (Vendor BPM - Wide Range, hwi_device_id ${wide.device.id}); only one device per sensor code can be assigned to a gateway (spec 2.8).`,
        ],
      });
    });

    it("cancels a pending order (the order is removed), not a shipped one", async () => {
      const a = env.account.id;
      const pending = await request(env);
      const shipped = await request(env, "P-2", {}, "Vendor Scale");
      const gone = await orders().advance(pending.device.id, {
        status: "Cancelled",
        detail: "Duplicate of order 1234",
      });
      expect(gone).toMatchObject({ status: "Cancelled", removed: true, next_status: null });
      // The answer is the order's last trace: with the admin's text, as any other last step's.
      expect(gone.history.at(-1)).toMatchObject({
        status: "Cancelled",
        detail: "Duplicate of order 1234",
      });
      expect(await env.store.devices.get(a, pending.device.id)).toBeNull();
      expect(statusesOf(env, pending.device.id)).toEqual(["Ready to Ship", "Cancelled"]);
      await orders().advance(shipped.device.id, { status: "Dropshipped" });
      expect(
        await fieldErrors(orders().advance(shipped.device.id, { status: "Cancelled" })),
      ).toEqual({
        status: [expect.stringContaining("Only a pending order")],
      });
    });

    it("lets the simulator carry on from wherever the admin left the order", async () => {
      const sim = await startSimulator(env);
      const { device } = await request(env);
      await orders().advance(device.id, { status: "Out for Delivery" });
      await drive(env, sim, T0 + DAY);
      expect(statusesOf(env, device.id)).toEqual([
        "Ready to Ship",
        "Dropshipped",
        "In Transit",
        "Out for Delivery",
        "Delivered",
      ]);
      // A timer armed for a step the admin already took does nothing.
      expect(await orders().runDue(device.id, 0)).toBe("stale");
    });

    it("lists orders by status (shipped, pending or one), account and kind", async () => {
      const other = await env.store.accounts.create({
        clientDomain: "elsewhere",
        environment: "development",
      });
      const a = await request(env);
      const b = await request(env, "P-2", {}, "Vendor Scale");
      await orders().advance(b.device.id, { status: "In Transit" });
      await env.store.patients.create(other.id, { externalId: "X" });
      const ids = async (query: Record<string, string>) =>
        (await orders().list(query)).rows.map((o) => o.id);
      expect(await ids({})).toEqual([a.device.id, b.device.id]);
      expect(await ids({ status: "shipped" })).toEqual([b.device.id]);
      expect(await ids({ status: "pending" })).toEqual([a.device.id]);
      expect(await ids({ status: "Ready to Ship" })).toEqual([a.device.id]);
      expect(await ids({ account: "CLINIC" })).toEqual([a.device.id, b.device.id]);
      expect(await ids({ account: "elsewhere" })).toEqual([]);
      expect(await ids({ kind: "replacement" })).toEqual([]);
      const [first] = (await orders().list({ status: "pending" })).rows;
      expect(first).toMatchObject({ client_domain: "clinic", hwi_device_id: a.device.id });
      expect(
        await fieldErrors(orders().list({ status: "lost", account: "nobody", kind: "x" })),
      ).toEqual({
        status: [expect.stringContaining('"lost" is not a valid choice.')],
        account: ['No account has client domain "nobody".'],
        kind: ['"x" is not a valid choice. Use device or replacement.'],
      });
    });
  });
}
