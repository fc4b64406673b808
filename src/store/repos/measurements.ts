import { atomic, CHUNK, type Ctx, checkedInt, countOf, invalid } from "../context.ts";
import type { MeasurementsRepo } from "../store.ts";
import type { MeasurementQuery, OrphanMatch } from "../types-ingest.ts";
import { insertMeasurements } from "./measurement-insert.ts";
import { toMeasurementRow } from "./measurement-rows.ts";

/** Measurements: idempotent ingestion (DESIGN "Uplink") and the queries of spec 4.4 / 8. */
export function measurementsRepo(ctx: Ctx): MeasurementsRepo {
  const { db } = ctx;
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
    query: (q) => queryMeasurements(ctx, q),
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

/**
 * By device, or by patient external_id (exact, spec 4.4) across all the patient's devices;
 * ordered by (timestamp, id) so equal timestamps page stably; offset or keyset paging.
 */
async function queryMeasurements(ctx: Ctx, q: MeasurementQuery) {
  const byDevice = q.deviceId !== undefined;
  if (byDevice === (q.patientExternalId !== undefined)) {
    throw invalid("a measurement query needs exactly one of deviceId and patientExternalId", {
      field: "deviceId",
    });
  }
  let w = ctx.db.selectFrom("measurements").selectAll().where("account_id", "=", q.accountId);
  w = byDevice
    ? w.where("device_id", "=", q.deviceId!)
    : w.where("patient_external_id", "=", q.patientExternalId!);
  if (q.metric !== undefined) w = w.where("metric", "=", q.metric);
  if (q.timestampGte !== undefined) w = w.where("timestamp", ">=", q.timestampGte);
  if (q.timestampLt !== undefined) w = w.where("timestamp", "<", q.timestampLt);
  if (q.createdGte !== undefined) w = w.where("created", ">=", q.createdGte);
  if (q.createdLt !== undefined) w = w.where("created", "<", q.createdLt);
  const total = q.count ? await countOf(w) : undefined;

  const desc = q.order === "desc";
  let page = w;
  if (q.after !== undefined) {
    const { timestamp, id } = q.after;
    page = page.where((eb) =>
      eb(eb.refTuple("timestamp", "id"), desc ? "<" : ">", eb.tuple(timestamp, id)),
    );
  }
  page = page
    .orderBy("timestamp", desc ? "desc" : "asc")
    .orderBy("id", desc ? "desc" : "asc")
    .limit(checkedInt("limit", q.limit));
  if (q.offset !== undefined && q.offset > 0) page = page.offset(checkedInt("offset", q.offset));
  const rows = (await page.execute()).map((r) => toMeasurementRow(ctx, r));
  return total === undefined ? { rows } : { rows, total };
}
