import { atomic, CHUNK, type Ctx } from "../context.ts";
import { readNum } from "../dialect.ts";
import type { MeasurementsRepo } from "../store.ts";
import type { OrphanMatch } from "../types-ingest.ts";
import { insertMeasurements } from "./measurement-insert.ts";
import { MeasurementQueries } from "./measurement-query.ts";
import { toMeasurementRow } from "./measurement-rows.ts";

/** Measurements: idempotent ingestion (DESIGN "Uplink") and the queries of spec 4.4 / 8. */
export function measurementsRepo(ctx: Ctx): MeasurementsRepo {
  const { db } = ctx;
  const queries = new MeasurementQueries(ctx);
  const orphans = (c: Ctx, match: OrphanMatch) => {
    let q = c.db
      .selectFrom("measurements")
      .selectAll()
      .where("device_id", "is", null)
      .where("hardware_uuid", "=", match.hardwareUuid)
      .where("sensor_code", match.sensorCode === null ? "is" : "=", match.sensorCode);
    if (match.sensorId !== undefined) {
      q = q.where("sensor_id", match.sensorId === null ? "is" : "=", match.sensorId);
    }
    if (match.deviceName !== undefined) {
      const name = match.deviceName;
      // Null: an orphan stored before orphans kept their type (migration 0009), any type's.
      q = q.where((eb) => eb.or([eb("device_name", "=", name), eb("device_name", "is", null)]));
    }
    return q;
  };
  return {
    insertMany: (input) => insertMeasurements(ctx, input),
    async get(id) {
      const r = await db
        .selectFrom("measurements")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return r === undefined ? null : toMeasurementRow(ctx, r);
    },
    async count(accountId) {
      const row = await db
        .selectFrom("measurements")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("account_id", "=", accountId)
        .executeTakeFirst();
      return readNum(row?.n ?? 0);
    },
    query: (q) => queries.rows(q),
    records: (q) => queries.records(q),
    async listOrphans(match) {
      const rows = await orphans(ctx, match).orderBy("timestamp").orderBy("id").execute();
      return rows.map((r) => toMeasurementRow(ctx, r));
    },
    attachOrphans(match, owner) {
      return atomic(ctx, async (tx) => {
        const ids = (
          await orphans(tx, match)
            // Readings already placed in another account (gateway associated, device not yet
            // activated) are never handed to a different one.
            .where((eb) =>
              eb.or([eb("account_id", "is", null), eb("account_id", "=", owner.accountId)]),
            )
            .clearSelect()
            .select("id")
            .execute()
        ).map((r) => r.id);
        if (ids.length === 0) return [];
        const rows = [];
        for (let start = 0; start < ids.length; start += CHUNK) {
          rows.push(
            ...(await tx.db
              .updateTable("measurements")
              .set({
                account_id: owner.accountId,
                device_id: owner.deviceId,
                device_name: owner.deviceName,
                patient_external_id: owner.patientExternalId,
              })
              .where("id", "in", ids.slice(start, start + CHUNK))
              .returningAll()
              .execute()),
          );
        }
        return rows
          .map((r) => toMeasurementRow(ctx, r))
          .sort((a, b) => a.timestamp - b.timestamp || a.id - b.id);
      });
    },
  };
}
