import { describe, expect, it } from "vitest";
import { WHITELIST_MAX, type WhitelistDown } from "../../../src/mqtt/envelope.ts";
import { encodePayload } from "../../../src/mqtt/payload.ts";
import {
  activate,
  DAY,
  drive,
  type FulfilmentEnv,
  fieldErrors,
  GW,
  IMEI,
  knownGateway,
  patientWithAddress,
  request,
  startSimulator,
  T0,
} from "../env.ts";

const INHALER = "Vendor Inhaler Sensor";

function inhalerOn(hardwareUuid: string, n: number) {
  return {
    device: { name: INHALER, hardware_uuid: hardwareUuid },
    sensor_id: `SN${String(n).padStart(4, "0")}`,
  };
}

/** Fills the gateway with WHITELIST_MAX inhalers, each its own whitelist entry. */
async function fill(env: FulfilmentEnv, hardwareUuid: string): Promise<void> {
  for (let n = 0; n < WHITELIST_MAX; n++) await activate(env, inhalerOn(hardwareUuid, n));
}

/** The whitelist downlink (src/mqtt/schema) lists at most WHITELIST_MAX devices. */
export function whitelistRoomSection(env: FulfilmentEnv): void {
  describe("whitelist room on a gateway", () => {
    it("refuses a device past the whitelist's limit, keyed device.hardware_uuid", async () => {
      await knownGateway(env);
      await fill(env, GW);
      const inhaler = await fieldErrors(activate(env, inhalerOn(GW, WHITELIST_MAX)));
      expect(inhaler).toEqual({
        device: {
          hardware_uuid: [
            `Gateway ${GW} already has 64 devices, the most its whitelist holds (64); unlink one of them or use another gateway.`,
          ],
        },
      });
      // A device of another sensor code, with its slot free, has no whitelist entry left either.
      const scale = await fieldErrors(
        activate(env, { device: { name: "Vendor Scale", hardware_uuid: GW } }),
      );
      expect(scale).toHaveProperty("device.hardware_uuid");
      // The whitelist as it stands is one the downlink can carry.
      const whitelist = await env.services.gateways.info(env.account.id, GW);
      expect(whitelist.whitelisted_devices).toHaveLength(WHITELIST_MAX);
      // Direct-cellular devices have no whitelist.
      await activate(env, { device: { name: "Vendor Cellular BPM", hardware_uuid: IMEI } });
    });

    // Each activation checks the room again inside its transaction; on PostgreSQL, with a pool of
    // connections, those transactions run at the same time unless the check holds a lock.
    for (const known of [true, false]) {
      it(`lets only as many racing activations through as there is room (${known ? "known gateway" : "devices waiting for an unknown one"})`, async () => {
        if (known) await knownGateway(env);
        const ROOM = 2;
        for (let n = 0; n < WHITELIST_MAX - ROOM; n++) await activate(env, inhalerOn(GW, n));
        const racing = Array.from({ length: 6 }, (_, i) =>
          env.services.activation.activate(env.account.id, inhalerOn(GW, 1000 + i)),
        );
        const outcomes = await Promise.allSettled(racing);
        const created = outcomes.filter((o) => o.status === "fulfilled");
        expect(created).toHaveLength(ROOM);
        for (const o of outcomes) {
          if (o.status === "rejected") {
            expect(o.reason).toMatchObject({ code: "E_API_VALIDATION" });
            expect((o.reason as { details: { fields: unknown } }).details.fields).toHaveProperty(
              "device.hardware_uuid",
            );
          }
        }
        const onGateway = await env.store.devices.findAllByHardware([GW]);
        expect(onGateway).toHaveLength(WHITELIST_MAX);
        if (known) expect(await env.store.whitelist.list(GW)).toHaveLength(WHITELIST_MAX);
      });
    }

    it("counts the devices waiting for an unknown gateway, and adopts no more than fit", async () => {
      await fill(env, GW);
      const refused = await fieldErrors(activate(env, inhalerOn(GW, WHITELIST_MAX)));
      expect(refused).toHaveProperty("device.hardware_uuid");
      // Devices that waited in excess (activated before the rule): the oldest fit, the rest wait.
      const extra = await env.store.devices.create(env.account.id, {
        name: INHALER,
        sensorCode: "25",
        hardwareUuid: GW,
        sensorId: "LATE01",
        status: "Unknown Gateway ID",
      });
      const result = await env.services.adoption.register(GW);
      expect(result.adopted).toHaveLength(WHITELIST_MAX);
      expect(result.crowdedOut.map((d) => d.id)).toEqual([extra.id]);
      expect((await env.store.devices.get(env.account.id, extra.id))?.status).toBe(
        "Unknown Gateway ID",
      );
      const entries = await env.store.whitelist.list(GW);
      expect(entries).toHaveLength(WHITELIST_MAX);
      const down: WhitelistDown = {
        v: 1,
        type: "whitelist",
        devices: entries.map((e) => ({
          mac_address: e.macAddress,
          sensor_code: e.sensorCode,
          whitelist_status: e.whitelistStatus,
        })),
      };
      expect(() => encodePayload("gw/down", down)).not.toThrow();
    });

    it("ships a new gateway for a patient whose gateway's whitelist is full", async () => {
      await knownGateway(env);
      await patientWithAddress(env, "P-1");
      for (let n = 0; n < WHITELIST_MAX; n++) {
        await activate(env, { ...inhalerOn(GW, n), patient: { external_id: "P-1" } });
      }
      const sim = await startSimulator(env);
      const { device } = await request(env, "P-1", {}, "Vendor Scale");
      await drive(env, sim, T0 + 30 * DAY);
      const order = await env.services.orders.get(device.id);
      expect(order).toMatchObject({ ships_device: true, ships_gateway: true });
      expect(order.hardware_uuid).not.toBe(GW);
      expect(await env.store.whitelist.list(GW)).toHaveLength(WHITELIST_MAX);
    });

    it("refuses the admin's shipping onto a gateway whose whitelist is full, keyed hardware_uuid", async () => {
      await knownGateway(env);
      await fill(env, GW);
      const { device } = await request(env, "P-1", {}, "Vendor Scale");
      expect(
        await fieldErrors(
          env.services.orders.advance(device.id, { status: "Dropshipped", hardware_uuid: GW }),
        ),
      ).toEqual({
        hardware_uuid: [
          `Gateway ${GW} already has 64 devices, the most its whitelist holds (64); unlink one of them or use another gateway.`,
        ],
      });
      expect(await env.store.whitelist.list(GW)).toHaveLength(WHITELIST_MAX);
      expect((await env.services.orders.get(device.id)).status).toBe("Ready to Ship");
    });
  });
}
