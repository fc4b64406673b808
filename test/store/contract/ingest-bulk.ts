import { describe, expect, it } from "vitest";
import { advance, type ContractEnv, newAccount, T0 } from "./env.ts";

/** The batch forms of the ingestion lookups: one query per batch instead of one per message. */
export function ingestBulkContract(env: ContractEnv): void {
  describe("ingestion in batches", () => {
    it("claims many message ids at once, each the first time only", async () => {
      expect(await env.store.ingestedMessages.claim("gw/m-1")).toBe(true);
      const claimed = await env.store.ingestedMessages.claimMany(
        ["gw/m-1", "gw/m-2", "gw/m-3", "gw/m-2"],
        T0 - 5,
      );
      expect(claimed).toEqual(new Set(["gw/m-2", "gw/m-3"]));
      expect(await env.store.ingestedMessages.claimMany(["gw/m-3"])).toEqual(new Set());
      expect(await env.store.ingestedMessages.claimMany([])).toEqual(new Set());
      const many = Array.from({ length: 1234 }, (_, i) => `bulk/${i}`);
      expect((await env.store.ingestedMessages.claimMany(many)).size).toBe(1234);
    });

    /** Two accounts; the first's patient P-1 with a cuff on the gateway (as `gateway` is spelt). */
    async function accountsWithCuff(gateway: string) {
      const a = await newAccount(env);
      const b = await newAccount(env);
      const p = await env.store.patients.create(a.id, { externalId: "P-1" });
      const bpm = await env.store.devices.create(a.id, {
        name: "Vendor BPM - Wide Range",
        sensorCode: "10",
        hardwareUuid: gateway,
        patientId: p.id,
        status: "Delivered",
      });
      return { a, b, bpm };
    }

    it("finds every device on many gateways or IMEIs, any account, with its patient", async () => {
      const { b, bpm } = await accountsWithCuff("297056120bd7");
      advance(env, 1);
      const inhaler = await env.store.devices.create(b.id, {
        name: "Vendor Inhaler Sensor",
        sensorCode: "25",
        sensorId: "AB1234",
        hardwareUuid: "297056120BD7",
        status: "Delivered",
      });
      const cellular = await env.store.devices.create(b.id, {
        name: "Vendor Cellular BPM",
        hardwareUuid: "356938035643809",
        status: "Delivered",
      });
      await env.store.devices.create(b.id, {
        name: "Vendor Scale",
        sensorCode: "34",
        hardwareUuid: "AAAAAAAAAAAA",
        status: "Delivered",
      });
      const found = await env.store.devices.findAllByHardware([
        "297056120BD7",
        "356938035643809",
        "FFFFFFFFFFFF",
      ]);
      expect(found.map((d) => d.id)).toEqual([bpm.id, inhaler.id, cellular.id]);
      expect(found[0]!.patient?.externalId).toBe("P-1");
      expect(found[1]!.patient).toBeNull();
      expect(await env.store.devices.findAllByHardware([])).toEqual([]);
      // Adoption's form: only the devices in one status; the same in a transaction (on SQLite,
      // run straight on the connection).
      await env.store.devices.update(b.id, inhaler.id, { status: "Unknown Gateway ID" });
      const gateways = ["297056120bd7", "356938035643809"];
      const waiting = await env.store.devices.findAllByHardware(gateways, "Unknown Gateway ID");
      expect(waiting.map((d) => [d.id, d.status])).toEqual([[inhaler.id, "Unknown Gateway ID"]]);
      expect(
        await env.store.transaction((tx) => tx.devices.findAllByHardware(gateways, "Delivered")),
      ).toEqual(
        (await env.store.devices.findAllByHardware(gateways)).filter((d) => d.id !== inhaler.id),
      );
      expect(await env.store.devices.findAllByHardware(gateways, "Active")).toEqual([]);
    });

    it("finds the devices that left gateways or IMEIs since a time, any account and case, and devices by id", async () => {
      const { a, b, bpm } = await accountsWithCuff("297056120BD7");
      const cellular = await env.store.devices.create(b.id, {
        name: "Vendor Cellular BPM",
        hardwareUuid: "356938035643809",
        status: "Delivered",
      });
      advance(env, 10);
      await env.store.devices.unlinkGateway(a.id, "297056120bd7");
      const since = T0 + 10;
      advance(env, 10);
      await env.store.devices.replaceHardware(b.id, "356938035643809", "356938035643817");
      const departures = await env.store.hardwareLogs.departures(
        ["297056120bd7", "356938035643809", "FFFFFFFFFFFF"],
        T0,
      );
      // With the patient each had there.
      expect(
        departures.map((d) => [
          d.deviceId,
          d.previousHardwareUuid,
          d.previousPatientExternalId,
          d.created,
        ]),
      ).toEqual([
        [bpm.id, "297056120BD7", "P-1", T0 + 10],
        [cellular.id, "356938035643809", null, T0 + 20],
      ]);
      // Strictly after `since`.
      expect(
        (await env.store.hardwareLogs.departures(["297056120BD7", "356938035643809"], since)).map(
          (d) => d.deviceId,
        ),
      ).toEqual([cellular.id]);
      expect(await env.store.hardwareLogs.departures([], T0)).toEqual([]);
      const byId = await env.store.devices.getManyById([cellular.id, bpm.id, "nope"]);
      expect(new Map(byId.map((d) => [d.id, d.patient?.externalId ?? null]))).toEqual(
        new Map([
          [bpm.id, "P-1"],
          [cellular.id, null],
        ]),
      );
    });

    it("reads many gateways, and records the latest measurement of many at once", async () => {
      const a = await newAccount(env);
      await env.store.gateways.associate(a.id, "297056120BD7");
      await env.store.gateways.recordMeasurements(
        new Map([
          ["297056120BD7", T0 + 10],
          ["FED091A643FF", T0 + 5],
        ]),
      );
      await env.store.gateways.recordMeasurements(
        new Map([
          ["297056120bd7", T0 + 3],
          ["FED091A643FF", T0 + 9],
        ]),
      );
      const rows = await env.store.gateways.getMany([
        "297056120bd7",
        "FED091A643FF",
        "000000000000",
      ]);
      const byUuid = new Map(rows.map((g) => [g.gatewayUuid, g]));
      expect(rows).toHaveLength(2);
      expect(byUuid.get("297056120BD7")).toMatchObject({
        accountId: a.id,
        lastMeasurement: T0 + 10,
      });
      expect(byUuid.get("FED091A643FF")).toMatchObject({
        accountId: null,
        lastMeasurement: T0 + 9,
      });
      await env.store.gateways.recordMeasurements(new Map());
    });
  });
}
