import type { Insertable } from "kysely";
import { atomic, CHUNK, type Ctx, templated } from "../context.ts";
import { readNum } from "../dialect.ts";
import { param } from "../query-templates.ts";
import type { MeasurementsTable } from "../schema.ts";
import type { InsertManyResult, MeasurementRow, NewMeasurement } from "../types-ingest.ts";
import { dedupeKey, toInsertable, toMeasurementRow } from "./measurement-rows.ts";

type Row = Insertable<MeasurementsTable>;

export const keyOfRow = (r: Pick<Row, "source" | "metric" | "device_timestamp" | "dedupe_index">) =>
  dedupeKey({
    source: r.source,
    metric: r.metric,
    timestamp: readNum(r.device_timestamp),
    dedupeIndex: readNum(r.dedupe_index),
  });

/**
 * MeasurementsRepo.insertMany: idempotent on the dedupe key (DESIGN "Uplink"). The first row of
 * each key in the batch is a candidate, the others duplicates; candidates already stored are
 * duplicates too. The ingestion hot path: one pass, each row's key built once.
 */
export async function insertMeasurements(
  ctx: Ctx,
  input: readonly NewMeasurement[],
): Promise<InsertManyResult> {
  const rows = input.map((m) => toInsertable(ctx, m));
  const seen = new Set<string>();
  const candidates: number[] = [];
  const keys: string[] = [];
  const duplicates: number[] = [];
  for (const [i, row] of rows.entries()) {
    const key = keyOfRow(row);
    if (seen.has(key)) {
      duplicates.push(i);
    } else {
      seen.add(key);
      candidates.push(i);
      keys.push(key);
    }
  }
  const inserted: MeasurementRow[] = [];
  const adopted = await atomic(ctx, async (tx) => {
    const ids = await insertDistinct(
      tx,
      candidates.map((i) => rows[i]!),
      keys,
    );
    for (const [c, i] of candidates.entries()) {
      const id = ids[c];
      if (id === undefined) duplicates.push(i);
      else inserted.push(storedRow(input[i]!, id, readNum(rows[i]!.created)));
    }
    return adoptOrphans(tx, rows, duplicates);
  });
  for (const [position, row] of adopted) {
    duplicates.splice(duplicates.indexOf(position), 1);
    const earlier = inserted.findIndex((m) => m.id === row.id);
    if (earlier >= 0) inserted.splice(earlier, 1);
    inserted.push(row);
  }
  duplicates.sort((a, b) => a - b);
  // Ids grow in insertion order; PostgreSQL does not promise RETURNING in that order.
  inserted.sort((a, b) => a.id - b.id);
  return { inserted, duplicates };
}

/**
 * The same reading relayed by two gateways is one row, kept as the first relay left it: an
 * orphan when that gateway had no device for it (another gateway in range, a replaced one), so
 * the copy from the gateway the device is activated on was dropped as a duplicate and the
 * reading never reached its patient. A duplicate of a device's takes over the orphan it
 * repeats (unless the orphan is already another account's, as attachOrphans), and counts as
 * stored. Returns the rows taken over, by input position.
 */
async function adoptOrphans(
  ctx: Ctx,
  rows: readonly Row[],
  duplicates: readonly number[],
): Promise<Map<number, MeasurementRow>> {
  const adopted = new Map<number, MeasurementRow>();
  for (const position of duplicates) {
    const row = rows[position]!;
    if (row.device_id === null || row.device_id === undefined) continue;
    // Every duplicate of a device's comes here (a gateway's resends too): one statement,
    // prepared once (query-templates.ts). An account_id = null never holds, so a reading no
    // account owns yet takes only an orphan no account holds.
    const [taken] = await templated(
      ctx,
      "measurements.adoptOrphan",
      () =>
        ctx.db
          .updateTable("measurements")
          .set({
            account_id: param<string | null>("owner"),
            device_id: param<string>("deviceId"),
            device_name: param<string | null>("deviceName"),
            patient_external_id: param<string | null>("patientExternalId"),
          })
          .where("source", "=", param<string>("source"))
          .where("metric", "=", param<string>("metric"))
          .where("device_timestamp", "=", param<number>("deviceTimestamp"))
          .where("dedupe_index", "=", param<number>("dedupeIndex"))
          .where("device_id", "is", null)
          .where((eb) =>
            eb.or([eb("account_id", "is", null), eb("account_id", "=", param<string>("owner"))]),
          )
          .returningAll(),
      {
        owner: row.account_id ?? null,
        deviceId: row.device_id,
        deviceName: row.device_name ?? null,
        patientExternalId: row.patient_external_id ?? null,
        source: row.source,
        metric: row.metric,
        deviceTimestamp: row.device_timestamp,
        dedupeIndex: row.dedupe_index,
      },
    );
    if (taken !== undefined) adopted.set(position, toMeasurementRow(ctx, taken));
  }
  return adopted;
}

/** The row as stored, built field by field: one object shape for every row (the spread of a
 * NewMeasurement made each one a slow dictionary object, to build and to post to a thread). */
function storedRow(m: NewMeasurement, id: number, created: number): MeasurementRow {
  return {
    id,
    accountId: m.accountId,
    deviceId: m.deviceId,
    deviceName: m.deviceName,
    patientExternalId: m.patientExternalId,
    source: m.source,
    hardwareUuid: m.hardwareUuid,
    sensorCode: m.sensorCode,
    sensorId: m.sensorId,
    metric: m.metric,
    value1: m.value1,
    value2: m.value2,
    timestamp: m.timestamp,
    timezoneOffset: m.timezoneOffset,
    estimatedTimestamp: m.estimatedTimestamp,
    filterParams: m.filterParams,
    measurementIndex: m.measurementIndex,
    deviceLogIndex: m.deviceLogIndex,
    messageId: m.messageId,
    characteristicUuid: m.characteristicUuid,
    raw: m.raw,
    created,
  };
}

/** The one-row insert's SQL by column list, compiled by Kysely once. */
const oneRowSql = new Map<string, string>();

/** Without RETURNING: SQLite then builds no result set per row (about a fifth of its cost). */
function oneRow(ctx: Ctx, row: Row): string {
  const key = Object.keys(row).join(",");
  let sql = oneRowSql.get(key);
  if (sql === undefined) {
    sql = ctx.db
      .insertInto("measurements")
      .values(row)
      .onConflict((oc) =>
        oc.columns(["source", "metric", "device_timestamp", "dedupe_index"]).doNothing(),
      )
      .compile().sql;
    oneRowSql.set(key, sql);
  }
  return sql;
}

/**
 * Inserts rows whose dedupe keys (`keys`, in the same order) are distinct, skipping those
 * already stored; returns the id of each row stored, undefined for each skipped. Runs inside a
 * transaction (atomic).
 *
 * SQLite runs in this process: one prepared one-row statement run per row straight on the
 * connection (Ctx.sqlite) — a skipped row changes nothing, a stored one has the last rowid.
 * Through Kysely each row cost a compiled-query round of promises as long as SQLite's own
 * work, and multi-row statements are parsed anew for every row count (test/bench/ingest.ts).
 * On PostgreSQL every statement is a round trip: multi-row statements of CHUNK rows.
 */
async function insertDistinct(
  ctx: Ctx,
  rows: readonly Row[],
  keys: readonly string[],
): Promise<(number | undefined)[]> {
  const ids: (number | undefined)[] = new Array(rows.length);
  if (rows.length === 0) return ids;
  if (ctx.sqlite !== undefined && ctx.inTx) {
    const statement = ctx.sqlite.prepare(oneRow(ctx, rows[0]!));
    for (const [i, row] of rows.entries()) {
      const { changes, lastInsertRowid } = statement.run(Object.values(row));
      if (Number(changes) === 1) ids[i] = Number(lastInsertRowid);
    }
    return ids;
  }
  const position = new Map(keys.map((key, i) => [key, i]));
  for (let start = 0; start < rows.length; start += CHUNK) {
    // Only the key comes back: the rest of each row is the input (no blobs read back).
    const stored = await ctx.db
      .insertInto("measurements")
      .values(rows.slice(start, start + CHUNK))
      .onConflict((oc) =>
        oc.columns(["source", "metric", "device_timestamp", "dedupe_index"]).doNothing(),
      )
      .returning(["id", "source", "metric", "device_timestamp", "dedupe_index"])
      .execute();
    for (const r of stored) ids[position.get(keyOfRow(r))!] = readNum(r.id);
  }
  return ids;
}
