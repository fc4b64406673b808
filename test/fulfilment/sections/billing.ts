import { describe, expect, it } from "vitest";
import { parseIso } from "../../../src/core/time.ts";
import {
  activate,
  advance,
  DAY,
  drive,
  eventsOf,
  type FulfilmentEnv,
  fieldErrors,
  GW,
  knownGateway,
  request,
  startSimulator,
  T0,
} from "../env.ts";

/** Midnight UTC of an ISO date. */
const day = (iso: string) => parseIso(iso)!;

/** Issue 4 §2: billable device-days per account, as the vendor would bill them. */
export function billingSection(env: FulfilmentEnv): void {
  describe("billing", () => {
    it("bills in-hand devices from activation and shipped ones from delivery, until unlink", async () => {
      const a = env.account.id;
      const sim = await startSimulator(env);
      await knownGateway(env);
      // 2024-10-16 (T0): activated with the hardware in hand; unlinked on 2024-10-21.
      const inHand = await env.services.activation.activate(a, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      const shipped = await request(env);
      const never = await request(env, "P-2", {}, "Vendor Pulse Ox");
      await env.services.orders.advance(never.device.id, { status: "Cancelled" });
      await drive(env, sim, day("2024-10-21") + 3_600_000);
      await env.services.unlink.unlink(a, inHand.device.id);
      await drive(env, sim, day("2024-11-05") + 12 * 3_600_000);

      const delivered = eventsOf(env, "hardware.delivered")[0]!.at;
      const deliveredDay = Math.floor(delivered / DAY) * DAY;
      const october = await env.services.billing({ month: "2024-10" });
      const account = october.accounts.find((x) => x.account_id === a)!;
      const shippedDays = (day("2024-11-01") - deliveredDay) / DAY;
      expect(account.devices).toEqual([
        {
          hwi_device_id: inHand.device.id,
          device_name: "Vendor Scale",
          basis: "activation",
          billable_from: T0,
          billable_until: day("2024-10-21") + 3_600_000,
          device_days: 6,
        },
        {
          hwi_device_id: shipped.device.id,
          device_name: "Vendor BPM - Wide Range",
          basis: "delivery",
          billable_from: delivered,
          billable_until: null,
          device_days: shippedDays,
        },
      ]);
      expect(account.device_days).toBe(6 + shippedDays);
      expect(account.hardware_shipped).toEqual({ devices: 1, gateways: 1 });
      expect(october).toMatchObject({ from: day("2024-10-01"), to: day("2024-11-01") });

      // November so far: the shipped device only, up to today (the lab's clock) included.
      const november = await env.services.billing({ from: "2024-11-01", to: "2024-11-30" });
      expect(november.accounts.find((x) => x.account_id === a)).toMatchObject({
        device_days: 5,
        devices: [{ hwi_device_id: shipped.device.id, device_days: 5 }],
        hardware_shipped: { devices: 0, gateways: 0 },
      });
      expect(november.as_of).toBe(env.clock.now());
      const one = await env.services.billing({
        account: "clinic",
        from: "2024-10-20",
        to: "2024-10-20",
      });
      expect(one.accounts).toHaveLength(1);
      expect(one.accounts[0]!.devices.map((d) => d.device_days)).toEqual([1]);
    });

    /** A scale whose box (with its gateway) is held at a facility, and its replacement delivered. */
    const heldScaleReplaced = async () => {
      const sim = await startSimulator(env);
      const { device } = await request(env, "P-1", {}, "Vendor Scale");
      await env.services.orders.advance(device.id, { status: "In Transit" });
      await env.services.orders.inject(device.id, { event: "held_at_facility" });
      const own = await env.services.replacements.create(env.account.id, {
        hwi_device_id: device.id,
        device_types: [{ name: "Vendor Scale" }],
      });
      await env.services.orders.advance(own.id, { status: "Delivered" });
      expect(eventsOf(env, "replacement.status").at(-1)!.status).toBe("Delivered");
      return { sim, device };
    };

    /** A replacement gateway ordered for the device and delivered: its Delivered event. */
    const gatewayReplacementDelivered = async (deviceId: string) => {
      const gateway = await env.services.replacements.create(env.account.id, {
        hwi_device_id: deviceId,
        device_types: [{ name: "Gateway" }],
      });
      await env.services.orders.advance(gateway.id, { status: "Delivered" });
      const delivered = eventsOf(env, "replacement.status").at(-1)!;
      expect(delivered).toMatchObject({ status: "Delivered", replacement: { id: gateway.id } });
      return delivered;
    };

    it("a replacement device for a held package bills nothing while the gateway is still in that package; from the delivery that brings the gateway too", async () => {
      const { sim, device } = await heldScaleReplaced();
      // The scale sends nothing without its gateway, still held with the first box (spec 1.1).
      const report = await env.services.billing({ account: "clinic" });
      expect(report.accounts[0]?.devices ?? []).toEqual([]);
      const delivered = await gatewayReplacementDelivered(device.id);
      const both = await env.services.billing({ account: "clinic" });
      expect(both.accounts[0]!.devices).toEqual([
        expect.objectContaining({
          hwi_device_id: device.id,
          basis: "delivery",
          billable_from: delivered.at,
          billable_until: null,
        }),
      ]);
      // The held package picked up later changes nothing: the device bills once.
      await env.services.orders.inject(device.id, { event: "picked_up" });
      await drive(env, sim, env.clock.now() + DAY);
      const after = await env.services.billing({ account: "clinic" });
      expect(after.accounts[0]!.devices).toEqual([
        expect.objectContaining({ hwi_device_id: device.id, billable_from: delivered.at }),
      ]);
    });

    it("a replacement device for a held package bills from the pickup of that package, which brings its gateway", async () => {
      const { sim, device } = await heldScaleReplaced();
      await drive(env, sim, env.clock.now() + DAY);
      expect(
        (await env.services.billing({ account: "clinic" })).accounts[0]?.devices ?? [],
      ).toEqual([]);
      await env.services.orders.inject(device.id, { event: "picked_up" });
      const pickedUp = env.clock.now();
      expect((await env.services.billing({ account: "clinic" })).accounts[0]!.devices).toEqual([
        expect.objectContaining({
          hwi_device_id: device.id,
          basis: "pickup",
          billable_from: pickedUp,
          billable_until: null,
        }),
      ]);
    });

    it("ship_gateway_only: a replacement device bills nothing while the gateway is still to come; a replacement gateway for a held one bills from its delivery", async () => {
      const a = env.account.id;
      await startSimulator(env);
      const { device } = await request(env, "P-1", { ship_gateway_only: true });
      await env.services.orders.advance(device.id, { status: "In Transit" });
      const own = await env.services.replacements.create(a, {
        hwi_device_id: device.id,
        device_types: [{ name: "Vendor BPM - Wide Range" }],
      });
      await env.services.orders.advance(own.id, { status: "Delivered" });
      expect(eventsOf(env, "replacement.status").at(-1)!.status).toBe("Delivered");
      const report = await env.services.billing({ account: "clinic" });
      expect(report.accounts[0]?.devices ?? []).toEqual([]);

      await env.services.orders.inject(device.id, { event: "held_at_facility" });
      const delivered = await gatewayReplacementDelivered(device.id);
      const after = await env.services.billing({ account: "clinic" });
      expect(after.accounts[0]!.devices).toEqual([
        expect.objectContaining({
          hwi_device_id: device.id,
          basis: "delivery",
          billable_from: delivered.at,
          billable_until: null,
        }),
      ]);
    });

    /** A BPM whose box (with a new gateway) is in the mail, and a scale that joins that gateway. */
    const scaleJoinsGatewayInTheMail = async () => {
      const { device: bpm } = await request(env);
      await env.services.orders.advance(bpm.id, { status: "In Transit" });
      const { device: scale } = await request(env, "P-1", {}, "Vendor Scale");
      const shipped = await env.services.orders.advance(scale.id, { status: "Delivered" });
      const gateway = (await env.services.orders.get(bpm.id)).hardware_uuid;
      expect(shipped).toMatchObject({ ships_gateway: false, hardware_uuid: gateway });
      // The scale sends nothing while its gateway is still in the mail (spec 1.1).
      advance(env, DAY);
      expect((await env.services.billing({ account: "clinic" })).accounts[0]?.devices).toEqual([]);
      return { bpm, scale };
    };

    it("a device that joins the patient's gateway still in the mail bills from that gateway's delivery, not its own", async () => {
      const { bpm, scale } = await scaleJoinsGatewayInTheMail();
      await env.services.orders.advance(bpm.id, { status: "Delivered" });
      const both = { basis: "delivery", billable_from: env.clock.now(), billable_until: null };
      expect((await env.services.billing({ account: "clinic" })).accounts[0]!.devices).toEqual([
        expect.objectContaining({ hwi_device_id: bpm.id, ...both }),
        expect.objectContaining({ hwi_device_id: scale.id, ...both }),
      ]);
      // Scenarios power on what each delivery brings: the scale's box no gateway (that one was
      // still in the mail), the BPM's box the gateway, for the BPM and the scale waiting for it.
      const gateway = (await env.services.orders.get(bpm.id)).hardware_uuid;
      const handed = eventsOf(env, "hardware.delivered");
      expect(handed.map((e) => [e.orderId, e.gatewayUuid, e.devices.map((d) => d.id)])).toEqual([
        [scale.id, null, [scale.id]],
        [bpm.id, gateway, [bpm.id, scale.id]],
      ]);
    });

    it("a replacement gateway's delivery hands over the devices with the patient, not one still in its own box", async () => {
      const { device: bpm } = await request(env);
      await env.services.orders.advance(bpm.id, { status: "Delivered" });
      const gateway = (await env.services.orders.get(bpm.id)).hardware_uuid;
      const { device: scale } = await request(env, "P-1", {}, "Vendor Scale");
      await env.services.orders.advance(scale.id, { status: "In Transit" });
      // The replacement moves the BPM and the scale (in the mail) to the new gateway.
      const { replacement } = await gatewayReplacementDelivered(bpm.id);
      await env.services.orders.advance(scale.id, { status: "Delivered" });
      const fresh = replacement.newHardwareUuid;
      const handed = eventsOf(env, "hardware.delivered");
      expect(handed.map((e) => [e.orderId, e.gatewayUuid, e.devices.map((d) => d.id)])).toEqual([
        [bpm.id, gateway, [bpm.id]],
        [replacement.id, fresh, [bpm.id]],
        // Its box shipped with the old gateway's id: it joins the one it is on now.
        [scale.id, fresh, [scale.id]],
      ]);
    });

    it("a device that joined a gateway held at the carrier bills from the delivery of a replacement gateway", async () => {
      const { bpm, scale } = await scaleJoinsGatewayInTheMail();
      await env.services.orders.inject(bpm.id, { event: "held_at_facility" });
      const delivered = await gatewayReplacementDelivered(bpm.id);
      // The scale, with the patient, is on the new gateway now; the BPM is still in the held box.
      const billing = await env.services.billing({ account: "clinic" });
      expect(billing.accounts[0]!.devices).toEqual([
        expect.objectContaining({ hwi_device_id: scale.id, billable_from: delivered.at }),
      ]);
    });

    it("a device activated in hand on a gateway still in the mail bills from that gateway's delivery, not its activation", async () => {
      const { device: bpm } = await request(env);
      await env.services.orders.advance(bpm.id, { status: "In Transit" });
      const gateway = (await env.services.orders.get(bpm.id)).hardware_uuid!;
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: gateway },
        patient: { external_id: "P-1" },
      });
      expect(scale.status).toBe("Active");
      expect((await env.services.billing({ account: "clinic" })).accounts[0]?.devices).toEqual([]);
      await env.services.orders.advance(bpm.id, { status: "Delivered" });
      const both = { basis: "delivery", billable_from: env.clock.now() };
      expect((await env.services.billing({ account: "clinic" })).accounts[0]!.devices).toEqual([
        expect.objectContaining({ hwi_device_id: bpm.id, ...both }),
        expect.objectContaining({ hwi_device_id: scale.id, ...both }),
      ]);
    });

    it("a gateway whose box an unlink stopped is no longer waited for: a device activated on it bills from activation", async () => {
      const { device: bpm } = await request(env);
      await env.services.orders.advance(bpm.id, { status: "In Transit" });
      const gateway = (await env.services.orders.get(bpm.id)).hardware_uuid!;
      await env.services.unlink.unlink(env.account.id, bpm.id);
      const { device: scale } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: gateway },
      });
      expect((await env.services.billing({ account: "clinic" })).accounts[0]!.devices).toEqual([
        expect.objectContaining({ hwi_device_id: scale.id, basis: "activation" }),
      ]);
    });

    it("a device on a gateway id the lab has never seen bills from that gateway's first check-in, not its activation", async () => {
      const a = env.account.id;
      // A mistyped or not yet powered gateway id: the device waits (Unknown Gateway ID).
      const { device } = await activate(env, {
        device: { name: "Vendor Scale", hardware_uuid: GW },
      });
      expect(device.status).toBe("Unknown Gateway ID");
      advance(env, 3 * DAY);
      expect((await env.services.billing({ account: "clinic" })).accounts[0]!.devices).toEqual([]);
      const checkedIn = env.clock.now();
      const { adopted } = await env.services.adoption.register(GW, {
        lastSignalStrength: 18,
        lastCheckinTime: checkedIn,
      });
      expect(adopted.map((d) => d.id)).toEqual([device.id]);
      advance(env, DAY);
      const report = await env.services.billing({ account: "clinic" });
      expect(report.accounts[0]!.devices).toEqual([
        expect.objectContaining({
          hwi_device_id: device.id,
          basis: "activation",
          billable_from: checkedIn,
          device_days: 2,
        }),
      ]);
      expect(a).toBe(report.accounts[0]!.account_id);
    });

    it("refuses a malformed period or an unknown account, keyed by field", async () => {
      expect(await fieldErrors(env.services.billing({ month: "2024-13" }))).toEqual({
        month: ['"2024-13" is not a month: YYYY-MM.'],
      });
      // Every mistake at once: a bad period does not hide an unknown account.
      expect(
        await fieldErrors(env.services.billing({ month: "2024-13", account: "nobody" })),
      ).toEqual({
        month: ['"2024-13" is not a month: YYYY-MM.'],
        account: ['No account has client domain "nobody".'],
      });
      expect(await fieldErrors(env.services.billing({ from: "2024-02-30" }))).toEqual({
        from: ['"2024-02-30" is not a date: YYYY-MM-DD.'],
      });
      expect(
        await fieldErrors(env.services.billing({ from: "2024-10-02", to: "2024-10-01" })),
      ).toEqual({
        to: ["The last day (2024-10-01) comes before the first (from: 2024-10-02)."],
      });
      // A to alone is checked against the from that defaulted, which the message names.
      const early = await fieldErrors(env.services.billing({ to: "2000-01-01" }));
      expect(early.to).toEqual([
        expect.stringMatching(
          /^The last day \(2000-01-01\) comes before the first \(from: \d{4}-\d{2}-01, the first of this month by default\)\.$/,
        ),
      ]);
      // A from alone is checked against the to that defaulted, and keyed by from, the one sent.
      const late = await fieldErrors(env.services.billing({ from: "9000-01-05" }));
      expect(late).toEqual({
        from: [
          expect.stringMatching(
            /^The first day \(9000-01-05\) comes after the last \(to: \d{4}-\d{2}-\d{2}, the last of this month by default\)\.$/,
          ),
        ],
      });
      // Its end, the day after the last, would be year 10000: not a date the API can write.
      const last = "A billing period ends by 9999-12-30 (month 9999-11 at the latest).";
      expect(await fieldErrors(env.services.billing({ month: "9999-12" }))).toEqual({
        month: [last],
      });
      expect(await fieldErrors(env.services.billing({ to: "9999-12-31" }))).toEqual({ to: [last] });
      expect((await env.services.billing({ month: "9999-11" })).to).toBe(Date.UTC(9999, 11, 1));
      expect(await fieldErrors(env.services.billing({ account: "nobody" }))).toEqual({
        account: ['No account has client domain "nobody".'],
      });
    });
  });
}
