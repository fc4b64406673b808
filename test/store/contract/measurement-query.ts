import { beforeEach, describe, expect, it } from "vitest";
import type {
  MeasurementQuery,
  MeasurementRecord,
  MeasurementRow,
} from "../../../src/store/types-ingest.ts";
import { type ContractEnv, DAY, expectCode, MINUTE, newAccount, reading, T0 } from "./env.ts";

/** The fields of a MeasurementRecord (what the API renders), in no particular order. */
const RECORD_KEYS = [
  "id",
  "metric",
  "deviceName",
  "deviceId",
  "patientExternalId",
  "hardwareUuid",
  "sensorCode",
  "value1",
  "value2",
  "created",
  "timestamp",
  "timezoneOffset",
  "estimatedTimestamp",
  "filterParams",
] as const satisfies readonly (keyof MeasurementRecord)[];

function recordOf(row: MeasurementRow): MeasurementRecord {
  return Object.fromEntries(RECORD_KEYS.map((k) => [k, row[k]])) as MeasurementRecord;
}

/**
 * Spec 4.4 and 8, wire-formats "Measurement queries": by device or patient, metric__name,
 * timestamp and created ranges, stable order, offset pagination with a count, keyset.
 */
export function measurementQueryContract(env: ContractEnv): void {
  describe("measurement queries", () => {
    let accountId = "";
    let otherId = "";
    const ids: Record<string, number> = {};

    /**
     * Patient P-1 has two devices (cuff dA, oximeter dB); P-2 has dC; another account has a
     * P-1 too. Several records share a timestamp, as one physical reading does.
     */
    beforeEach(async () => {
      const a = await newAccount(env);
      const other = await newAccount(env);
      accountId = a.id;
      otherId = other.id;
      const rec = (
        name: string,
        device: string,
        patient: string,
        metric: string,
        at: number,
        created: number,
        index: number,
        account = a.id,
      ) => ({
        name,
        row: reading({
          accountId: account,
          deviceId: device,
          patientExternalId: patient,
          source: device,
          metric,
          timestamp: at,
          created,
          measurementIndex: index,
        }),
      });
      const all = [
        rec("a1", "dA", "P-1", "blood_pressure", T0 + 2 * MINUTE, T0 + DAY, 1),
        rec("a2", "dA", "P-1", "pulse", T0 + 2 * MINUTE, T0 + DAY, 1),
        rec("a3", "dA", "P-1", "battery_percentage", T0 + 2 * MINUTE, T0 + DAY, 1),
        rec("a4", "dA", "P-1", "blood_pressure", T0, T0 + 2 * DAY, 2),
        rec("b1", "dB", "P-1", "pulse", T0 + MINUTE, T0 + 3 * DAY, 1),
        rec("b2", "dB", "P-1", "spO2", T0 + MINUTE, T0 + 3 * DAY, 1),
        rec("c1", "dC", "P-2", "pulse", T0, T0, 1),
        rec("x1", "dX", "P-1", "pulse", T0, T0, 1, other.id),
        rec("lower", "dL", "p-1", "pulse", T0, T0, 1),
      ];
      const { inserted } = await env.store.measurements.insertMany(all.map((r) => r.row));
      inserted.forEach((m, i) => {
        ids[all[i]!.name] = m.id;
      });
    });

    const names = async (q: Omit<MeasurementQuery, "accountId" | "limit"> & { limit?: number }) => {
      const { rows } = await env.store.measurements.query({
        accountId,
        limit: 100,
        ...q,
      } as MeasurementQuery);
      const byId = new Map(Object.entries(ids).map(([k, v]) => [v, k]));
      return rows.map((m) => byId.get(m.id));
    };

    it("counts every record of an account, and none of another's (the dashboard's total)", async () => {
      expect(await env.store.measurements.count(accountId)).toBe(8);
      expect(await env.store.measurements.count(otherId)).toBe(1);
      expect(await env.store.measurements.count("no-such-account")).toBe(0);
    });

    it("orders by timestamp then id, so equal timestamps keep a stable order", async () => {
      expect(await names({ deviceId: "dA" })).toEqual(["a4", "a1", "a2", "a3"]);
      expect(await names({ deviceId: "dA", order: "desc" })).toEqual(["a3", "a2", "a1", "a4"]);
    });

    it("reads a patient across all its devices, by exact external_id, in its account only", async () => {
      expect(await names({ patientExternalId: "P-1" })).toEqual([
        "a4",
        "b1",
        "b2",
        "a1",
        "a2",
        "a3",
      ]);
      expect(await names({ patientExternalId: "p-1" })).toEqual(["lower"]);
      expect(await names({ patientExternalId: "P-3" })).toEqual([]);
      expect(await names({ deviceId: "dX" })).toEqual([]);
    });

    it("filters metric__name", async () => {
      expect(await names({ patientExternalId: "P-1", metric: "pulse" })).toEqual(["b1", "a2"]);
      expect(await names({ deviceId: "dA", metric: "blood_pressure" })).toEqual(["a4", "a1"]);
    });

    it("timestamp__gte is inclusive and timestamp__lt exclusive", async () => {
      expect(
        await names({
          patientExternalId: "P-1",
          timestampGte: T0 + MINUTE,
          timestampLt: T0 + 2 * MINUTE,
        }),
      ).toEqual(["b1", "b2"]);
      expect(await names({ deviceId: "dA", timestampGte: T0 + 2 * MINUTE })).toEqual([
        "a1",
        "a2",
        "a3",
      ]);
      expect(await names({ deviceId: "dA", timestampLt: T0 + 2 * MINUTE })).toEqual(["a4"]);
    });

    it("created__gte is inclusive and created__lt exclusive", async () => {
      expect(await names({ patientExternalId: "P-1", createdGte: T0 + 2 * DAY })).toEqual([
        "a4",
        "b1",
        "b2",
      ]);
      expect(
        await names({ patientExternalId: "P-1", createdGte: T0 + DAY, createdLt: T0 + 2 * DAY }),
      ).toEqual(["a1", "a2", "a3"]);
      expect(
        await names({
          patientExternalId: "P-1",
          metric: "pulse",
          createdLt: T0 + 3 * DAY,
          timestampGte: T0,
        }),
      ).toEqual(["a2"]);
    });

    it("pages with limit and offset; the count covers every matching row", async () => {
      const q = { accountId, patientExternalId: "P-1", limit: 4 } as const;
      const first = await env.store.measurements.query({ ...q, count: true });
      expect(first.total).toBe(6);
      expect(first.rows).toHaveLength(4);
      const second = await env.store.measurements.query({ ...q, offset: 4, count: true });
      expect(second.total).toBe(6);
      expect([...first.rows, ...second.rows].map((m) => m.id)).toEqual(
        ["a4", "b1", "b2", "a1", "a2", "a3"].map((n) => ids[n]),
      );
      expect((await env.store.measurements.query(q)).total).toBeUndefined();
      const empty = await env.store.measurements.query({ ...q, metric: "glucose", count: true });
      expect(empty).toEqual({ rows: [], total: 0 });
    });

    it("continues from a keyset cursor in either order", async () => {
      const base = { accountId, patientExternalId: "P-1", limit: 2 } as const;
      const seen: number[] = [];
      let after: { timestamp: number; id: number } | undefined;
      for (;;) {
        const { rows } = await env.store.measurements.query({
          ...base,
          ...(after ? { after } : {}),
        });
        if (rows.length === 0) break;
        seen.push(...rows.map((m) => m.id));
        const last = rows.at(-1)!;
        after = { timestamp: last.timestamp, id: last.id };
      }
      expect(seen).toEqual(["a4", "b1", "b2", "a1", "a2", "a3"].map((n) => ids[n]));
      const back = await env.store.measurements.query({
        ...base,
        order: "desc",
        after: { timestamp: T0 + 2 * MINUTE, id: ids.a2! },
      });
      expect(back.rows.map((m) => m.id)).toEqual([ids.a1, ids.b2]);
    });

    it("records: the same query, with only the fields a measurement GET renders", async () => {
      const withValues = await env.store.measurements.insertMany([
        reading({
          accountId,
          deviceId: "dA",
          patientExternalId: "P-1",
          metric: "blood_pressure",
          value1: 128.5,
          value2: 82,
          timestamp: T0 + 3 * MINUTE,
          estimatedTimestamp: true,
          filterParams: { measurement_index: 3, nested: { list: [1, "two", null] } },
          raw: new Uint8Array([1, 2, 3]),
        }),
      ]);
      expect(withValues.inserted).toHaveLength(1);
      const queries: MeasurementQuery[] = [
        { accountId, patientExternalId: "P-1", limit: 100, count: true },
        { accountId, deviceId: "dA", metric: "blood_pressure", limit: 1, offset: 1, count: true },
        { accountId, deviceId: "dA", limit: 2, order: "desc", timestampGte: T0 + MINUTE },
        { accountId, patientExternalId: "P-1", limit: 2, after: { timestamp: T0, id: ids.a4! } },
        { accountId, patientExternalId: "P-1", limit: 100, createdLt: T0 + 3 * DAY },
      ];
      for (const q of queries) {
        const full = await env.store.measurements.query(q);
        const records = await env.store.measurements.records(q);
        expect(records.total).toBe(full.total);
        expect(records.rows.length).toBeGreaterThan(0);
        expect(records.rows).toEqual(full.rows.map(recordOf));
        for (const r of records.rows)
          expect(Object.keys(r).sort()).toEqual([...RECORD_KEYS].sort());
      }
      const [stored] = (
        await env.store.measurements.records({ accountId, deviceId: "dA", limit: 1, order: "desc" })
      ).rows;
      expect(stored).toEqual({
        id: withValues.inserted[0]!.id,
        metric: "blood_pressure",
        deviceName: null,
        deviceId: "dA",
        patientExternalId: "P-1",
        hardwareUuid: "297056120BD7",
        sensorCode: "10",
        value1: 128.5,
        value2: 82,
        created: withValues.inserted[0]!.created,
        timestamp: T0 + 3 * MINUTE,
        timezoneOffset: -4,
        estimatedTimestamp: true,
        filterParams: { measurement_index: 3, nested: { list: [1, "two", null] } },
      });
    });

    it("needs exactly one of device and patient, and a sane limit", async () => {
      await expectCode(
        env.store.measurements.query({ accountId, limit: 1 } as MeasurementQuery),
        "E_STORE_INVALID",
      );
      await expectCode(
        env.store.measurements.query({
          accountId,
          deviceId: "dA",
          patientExternalId: "P-1",
          limit: 1,
        } as unknown as MeasurementQuery),
        "E_STORE_INVALID",
      );
      await expectCode(
        env.store.measurements.query({ accountId, deviceId: "dA", limit: -1 }),
        "E_STORE_INVALID",
      );
    });
  });
}
