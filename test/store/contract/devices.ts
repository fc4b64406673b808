import { describe, expect, it } from "vitest";
import type { NewDevice } from "../../../src/store/types.ts";
import { advance, type ContractEnv, expectCode, newAccount } from "./env.ts";

const GW = "297056120BD7";
const bpm = (over: Partial<NewDevice> = {}): NewDevice => ({
  name: "Vendor BPM - Wide Range",
  sensorCode: "10",
  hardwareUuid: GW,
  status: "Dropshipped",
  ...over,
});

/** Keys of every kind in code point order; a database collation (en-US) would put Zeta last. */
export const PROPERTY_KEYS_BY_CODE_POINT = ["Zeta", "_x", "a-c", "ab", "alpha", "e", "É"];

/** Spec 2.4, 2.8, 3, 4.3: devices, the gateway slot rule, unlink and replacement. */
export function devicesContract(env: ContractEnv): void {
  describe("devices", () => {
    it("creates a device with its nested patient and logs the activation", async () => {
      const a = await newAccount(env);
      const p = await env.store.patients.create(a.id, { externalId: "P-1", name: "One" });
      const d = await env.store.devices.create(a.id, {
        ...bpm({ patientId: p.id, requireSignature: true, metaData: { order: 7 } }),
      });
      expect(d).toMatchObject({
        accountId: a.id,
        sensorCode: "10",
        hardwareUuid: GW,
        sensorId: null,
        patientId: p.id,
        requireSignature: true,
        shipGatewayOnly: false,
        metaData: { order: 7 },
      });
      expect(await env.store.devices.get(a.id, d.id)).toEqual({ ...d, patient: p });
      const b = await newAccount(env);
      expect(await env.store.devices.get(b.id, d.id)).toBeNull();
      const { rows } = await env.store.hardwareLogs.list(a.id);
      expect(rows).toMatchObject([
        { deviceId: d.id, previousHardwareUuid: null, hardwareUuid: GW, reason: "activation" },
      ]);
    });

    it("allows one device per sensor code per gateway, several with distinct sensor ids", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      await env.store.devices.create(a.id, bpm());
      await expectCode(env.store.devices.create(a.id, bpm()), "E_STORE_CONFLICT");
      // The gateway id matches ignoring case, and across accounts (one physical gateway).
      await expectCode(
        env.store.devices.create(b.id, bpm({ hardwareUuid: GW.toLowerCase() })),
        "E_STORE_CONFLICT",
      );
      await env.store.devices.create(a.id, bpm({ name: "Vendor Pulse Ox", sensorCode: "24" }));
      const inhaler = (sensorId: string) =>
        bpm({ name: "Vendor Inhaler", sensorCode: "25", sensorId });
      await env.store.devices.create(a.id, inhaler("AB1234"));
      await env.store.devices.create(a.id, inhaler("AB1235"));
      await expectCode(env.store.devices.create(a.id, inhaler("AB1234")), "E_STORE_CONFLICT");
      // Devices with no gateway never collide.
      await env.store.devices.create(a.id, bpm({ hardwareUuid: null }));
      await env.store.devices.create(a.id, bpm({ hardwareUuid: null }));
      expect((await env.store.devices.list(a.id, {}, { count: true })).total).toBe(6);
      expect((await env.store.devices.list(b.id, {}, { count: true })).total).toBe(0);
    });

    it("refuses a patient of another account and an id already used", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      const foreign = await env.store.patients.create(b.id, { externalId: "P-1" });
      await expectCode(
        env.store.devices.create(a.id, bpm({ patientId: foreign.id })),
        "E_STORE_NOT_FOUND",
      );
      const d = await env.store.devices.create(a.id, bpm({ hardwareUuid: null }));
      await expectCode(
        env.store.devices.create(a.id, bpm({ id: d.id, hardwareUuid: null })),
        "E_STORE_CONFLICT",
      );
    });

    it("updates fields, logs a hardware_uuid change, and keeps the slot rule", async () => {
      const a = await newAccount(env);
      const one = await env.store.devices.create(a.id, bpm());
      const two = await env.store.devices.create(a.id, bpm({ hardwareUuid: "AAAAAAAAAAAA" }));
      const p = await env.store.patients.create(a.id, { externalId: "P-1" });
      advance(env, 100);
      const updated = await env.store.devices.update(a.id, one.id, {
        status: "In Transit",
        patientId: p.id,
      });
      expect(updated).toMatchObject({ status: "In Transit", patientId: p.id, hardwareUuid: GW });
      expect(updated.modified).toBe(one.created + 100);
      await expectCode(
        env.store.devices.update(a.id, two.id, { hardwareUuid: GW.toLowerCase() }),
        "E_STORE_CONFLICT",
      );
      const moved = await env.store.devices.update(a.id, two.id, { hardwareUuid: "BBBBBBBBBBBB" });
      expect(moved.hardwareUuid).toBe("BBBBBBBBBBBB");
      const logs = await env.store.hardwareLogs.list(a.id, { deviceId: two.id });
      expect(logs.rows.map((l) => [l.previousHardwareUuid, l.hardwareUuid, l.reason])).toEqual([
        [null, "AAAAAAAAAAAA", "activation"],
        ["AAAAAAAAAAAA", "BBBBBBBBBBBB", "update"],
      ]);
      await expectCode(
        env.store.devices.update(a.id, "missing", { status: "x" }),
        "E_STORE_NOT_FOUND",
      );
    });

    it("finds the device in a gateway slot for ingestion, ignoring the id's case", async () => {
      const a = await newAccount(env);
      const cuff = await env.store.devices.create(a.id, bpm());
      const i1 = await env.store.devices.create(a.id, bpm({ sensorCode: "25", sensorId: "S1" }));
      const cell = await env.store.devices.create(a.id, {
        name: "Vendor Cellular BPM",
        hardwareUuid: "356938035643809",
        status: "Delivered",
      });
      const find = env.store.devices.findByHardware;
      expect((await find({ hardwareUuid: GW.toLowerCase(), sensorCode: "10" }))?.id).toBe(cuff.id);
      expect((await find({ hardwareUuid: GW, sensorCode: "25", sensorId: "S1" }))?.id).toBe(i1.id);
      expect(await find({ hardwareUuid: GW, sensorCode: "25", sensorId: "S2" })).toBeNull();
      expect(await find({ hardwareUuid: GW, sensorCode: "12" })).toBeNull();
      expect((await find({ hardwareUuid: "356938035643809", sensorCode: null }))?.id).toBe(cell.id);
    });

    it("unlinks a gateway: hardware_uuid becomes null on its devices only, logged", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      const one = await env.store.devices.create(a.id, bpm());
      advance(env, 1); // list order is (created, id)
      const two = await env.store.devices.create(a.id, bpm({ sensorCode: "24" }));
      const elsewhere = await env.store.devices.create(a.id, bpm({ hardwareUuid: "AAAAAAAAAAAA" }));
      expect(await env.store.devices.unlinkGateway(b.id, GW)).toEqual([]);
      const changes = await env.store.devices.unlinkGateway(a.id, GW.toLowerCase(), {
        status: "Unlinked",
      });
      expect(changes.map((c) => [c.device.id, c.previousHardwareUuid])).toEqual([
        [one.id, GW],
        [two.id, GW],
      ]);
      expect(changes.every((c) => c.device.hardwareUuid === null)).toBe(true);
      expect((await env.store.devices.get(a.id, one.id))?.status).toBe("Unlinked");
      expect((await env.store.devices.get(a.id, elsewhere.id))?.hardwareUuid).toBe("AAAAAAAAAAAA");
      const logs = await env.store.hardwareLogs.list(a.id, { deviceId: one.id });
      expect(logs.rows.at(-1)).toMatchObject({
        previousHardwareUuid: GW,
        hardwareUuid: null,
        reason: "unlink",
      });
      // The slot is free again.
      await env.store.devices.create(a.id, bpm());
      // By device id: just that device.
      const single = await env.store.devices.unlinkDevice(a.id, elsewhere.id);
      expect(single).toMatchObject({
        previousHardwareUuid: "AAAAAAAAAAAA",
        device: { hardwareUuid: null },
      });
      expect(await env.store.devices.unlinkDevice(a.id, "missing")).toBeNull();
    });

    it("replaces a gateway on all its devices at once, or on none", async () => {
      const a = await newAccount(env);
      const one = await env.store.devices.create(a.id, bpm());
      advance(env, 1); // list order is (created, id)
      const two = await env.store.devices.create(a.id, bpm({ sensorCode: "24" }));
      const changes = await env.store.devices.replaceHardware(a.id, GW, "FED091A643FF");
      expect(
        changes.map((c) => [c.device.id, c.previousHardwareUuid, c.device.hardwareUuid]),
      ).toEqual([
        [one.id, GW, "FED091A643FF"],
        [two.id, GW, "FED091A643FF"],
      ]);
      const logs = await env.store.hardwareLogs.list(a.id, {}, { count: true });
      expect(logs.total).toBe(4);
      expect(logs.rows.filter((l) => l.reason === "replacement")).toHaveLength(2);
      // A target gateway that already holds a sensor code 24 device: nothing moves.
      await env.store.devices.create(a.id, bpm({ hardwareUuid: "CCCCCCCCCCCC", sensorCode: "24" }));
      await expectCode(
        env.store.devices.replaceHardware(a.id, "FED091A643FF", "CCCCCCCCCCCC"),
        "E_STORE_CONFLICT",
      );
      expect((await env.store.devices.get(a.id, one.id))?.hardwareUuid).toBe("FED091A643FF");
      expect((await env.store.hardwareLogs.list(a.id, {}, { count: true })).total).toBe(5);
      await expectCode(env.store.devices.replaceHardware(a.id, GW, "X"), "E_STORE_NOT_FOUND");
    });

    it("deletes a device with its properties", async () => {
      const a = await newAccount(env);
      const d = await env.store.devices.create(a.id, bpm());
      await env.store.deviceProperties.set(d.id, "measurement_webhook_id", "w-1");
      expect(await env.store.devices.delete(a.id, d.id)).toBe(true);
      expect(await env.store.devices.get(a.id, d.id)).toBeNull();
      expect(await env.store.deviceProperties.list(d.id)).toEqual([]);
      expect(await env.store.devices.delete(a.id, d.id)).toBe(false);
    });

    it("keeps device properties as a key/value list, one value per key", async () => {
      const a = await newAccount(env);
      const d = await env.store.devices.create(a.id, bpm());
      const first = await env.store.deviceProperties.set(d.id, "measurement_webhook_id", "w-1");
      advance(env, 5);
      await env.store.deviceProperties.set(d.id, "colour", "blue");
      const second = await env.store.deviceProperties.set(d.id, "measurement_webhook_id", "w-2");
      expect(second).toMatchObject({
        value: "w-2",
        created: first.created,
        modified: first.created + 5,
      });
      expect((await env.store.deviceProperties.list(d.id)).map((p) => [p.key, p.value])).toEqual([
        ["colour", "blue"],
        ["measurement_webhook_id", "w-2"],
      ]);
      expect(await env.store.deviceProperties.delete(d.id, "colour")).toBe(true);
      expect(await env.store.deviceProperties.delete(d.id, "colour")).toBe(false);
      await expectCode(env.store.deviceProperties.set("missing", "k", "v"), "E_STORE_NOT_FOUND");
    });

    it("lists device properties by code point, as clients see them (hwi-devices/{id}/properties/)", async () => {
      const a = await newAccount(env);
      const d = await env.store.devices.create(a.id, bpm());
      for (const key of ["alpha", "Zeta", "É", "e", "a-c", "ab", "_x"]) {
        await env.store.deviceProperties.set(d.id, key, "v");
      }
      expect((await env.store.deviceProperties.list(d.id)).map((p) => p.key)).toEqual(
        PROPERTY_KEYS_BY_CODE_POINT,
      );
    });
  });
}
