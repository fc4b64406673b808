import { type Insertable, type Selectable, sql } from "kysely";
import {
  atomic,
  type Ctx,
  chunked,
  conflict,
  countOf,
  invalid,
  notFound,
  paged,
  templated,
  templatedIn,
} from "../context.ts";
import { readBool, readNum, readNumOrNull } from "../dialect.ts";
import { param, paramRow } from "../query-templates.ts";
import type { GatewaysTable } from "../schema.ts";
import type { GatewaysRepo } from "../store.ts";
import { GATEWAY_ORDERINGS, type GatewayRow, type GatewayStatus } from "../types-hardware.ts";

export function toGatewayRow(ctx: Ctx, r: Selectable<GatewaysTable>): GatewayRow {
  return {
    gatewayUuid: r.gateway_uuid,
    accountId: r.account_id,
    lastSignalStrength: readNum(r.last_signal_strength),
    lastMeasurement: readNumOrNull(r.last_measurement),
    lastCheckinTime: readNumOrNull(r.last_checkin_time),
    shippedOn: readNumOrNull(r.shipped_on),
    assignedOn: readNumOrNull(r.assigned_on),
    firmwareVersion: r.firmware_version,
    bootloaderVersion: r.bootloader_version,
    provisioned: readBool(r.provisioned),
    properties: (ctx.d.readJson(r.properties) as unknown[] | null) ?? [],
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}

/** The gateway row by its uuid, any case (built once: query-templates.ts). */
const byUuid = async (ctx: Ctx, gatewayUuid: string) =>
  (
    await templated(
      ctx,
      "gateways.byUuid",
      () =>
        ctx.db
          .selectFrom("gateways")
          .selectAll()
          .where("gateway_uuid_lc", "=", param<string>("uuidLc")),
      { uuidLc: gatewayUuid.toLowerCase() },
    )
  )[0];

/** The gateway row, created (not associated with any account) when unknown. */
export async function ensureGateway(
  ctx: Ctx,
  gatewayUuid: string,
): Promise<Selectable<GatewaysTable>> {
  if (gatewayUuid.trim() === "")
    throw invalid("gateway_uuid is required", { field: "gateway_uuid" });
  // Known already (every check-in after the first): a read, no write.
  const known = await byUuid(ctx, gatewayUuid);
  if (known !== undefined) return known;
  await ctx.db
    .insertInto("gateways")
    .values(newGateway(ctx, gatewayUuid, ctx.clock.now()))
    .onConflict((oc) => oc.column("gateway_uuid_lc").doNothing())
    .execute();
  return (await byUuid(ctx, gatewayUuid))!;
}

/** A gateway row as a status report or a reading first makes it: no account, no signal. */
function newGateway(ctx: Ctx, gatewayUuid: string, now: number): Insertable<GatewaysTable> {
  return {
    gateway_uuid: gatewayUuid,
    gateway_uuid_lc: gatewayUuid.toLowerCase(),
    account_id: null,
    last_signal_strength: 0,
    last_measurement: null,
    last_checkin_time: null,
    shipped_on: null,
    assigned_on: null,
    firmware_version: null,
    bootloader_version: null,
    provisioned: ctx.d.toBool(false),
    properties: "[]",
    created: now,
    modified: now,
  };
}

/** Creates the unknown gateways among these (not associated with any account). */
async function ensureGateways(ctx: Ctx, gatewayUuids: readonly string[]): Promise<void> {
  const now = ctx.clock.now();
  const rows = gatewayUuids.map((gatewayUuid) => newGateway(ctx, gatewayUuid, now));
  const insert = (values: Insertable<GatewaysTable> | Insertable<GatewaysTable>[]) =>
    ctx.db
      .insertInto("gateways")
      .values(values)
      .onConflict((oc) => oc.column("gateway_uuid_lc").doNothing());
  if (ctx.sqlite !== undefined && ctx.inTx) {
    // Every ingested batch with readings runs this (recordMeasurements): one-row statements
    // built once, as measurements are inserted (measurement-insert.ts).
    for (const row of rows)
      await templated(ctx, "gateways.ensure", () => insert(paramRow(row)), row);
    return;
  }
  for (const part of chunked(rows)) await insert(part).execute();
}

/** Spec 2.2 last_measurement of each gateway: the latest of the stored and the given time. */
function recordMeasurements(ctx: Ctx, latest: ReadonlyMap<string, number>): Promise<void> {
  // One entry per gateway whatever the case of its uuid, with its latest time.
  const byLc = new Map<string, { uuid: string; at: number }>();
  for (const [gatewayUuid, at] of latest) {
    if (gatewayUuid.trim() === "") {
      throw invalid("gateway_uuid is required", { field: "gateway_uuid" });
    }
    const lc = gatewayUuid.toLowerCase();
    const known = byLc.get(lc);
    if (known === undefined || known.at < at) byLc.set(lc, { uuid: gatewayUuid, at });
  }
  if (byLc.size === 0) return Promise.resolve();
  return atomic(ctx, async (tx) => {
    await ensureGateways(
      tx,
      [...byLc.values()].map((g) => g.uuid),
    );
    const now = ctx.clock.now();
    // Readings arrive out of order (offline stores): a time older than the stored one changes
    // nothing.
    if (tx.sqlite !== undefined) {
      // SQLite in this process: a one-row statement per gateway, built once.
      for (const [lc, g] of byLc) {
        await templated(
          tx,
          "gateways.recordMeasurement",
          () =>
            tx.db
              .updateTable("gateways")
              .set({ last_measurement: param("at"), modified: param("now") })
              .where("gateway_uuid_lc", "=", param<string>("lc"))
              .where((eb) =>
                eb.or([
                  eb("last_measurement", "is", null),
                  eb("last_measurement", "<", param<number>("at")),
                ]),
              ),
          { lc, at: g.at, now },
        );
      }
      return;
    }
    // PostgreSQL: one statement (a round trip) per CHUNK gateways (WITH … UPDATE … FROM).
    for (const entries of chunked([...byLc])) {
      const values = sql.join(entries.map(([lc, g]) => sql`(${lc}, cast(${g.at} as bigint))`));
      await sql`with v(uuid_lc, at) as (values ${values})
        update gateways set last_measurement = v.at, modified = ${now} from v
        where gateways.gateway_uuid_lc = v.uuid_lc
          and (gateways.last_measurement is null or gateways.last_measurement < v.at)`.execute(
        tx.db,
      );
    }
  });
}

function checkStatus(status: GatewayStatus): void {
  const s = status.lastSignalStrength;
  if (s !== undefined && !(Number.isInteger(s) && s >= 0 && s <= 30)) {
    throw invalid("last_signal_strength must be an integer from 0 to 30 (spec 8)", {
      field: "last_signal_strength",
      value: s,
    });
  }
}

/** Spec 2.2, 2.3, 4.2: gateways, their health, their association with an account. */
export function gatewaysRepo(ctx: Ctx): GatewaysRepo {
  // One shape per set of columns (a check-in sets five, the last will one, shipping one). A
  // known gateway (every check-in after its first) is updated by its uuid in one statement;
  // an unknown one is created first, as ensureGateway does.
  const update = (gatewayUuid: string, set: Record<string, unknown>) =>
    atomic(ctx, async (tx) => {
      if (gatewayUuid.trim() === "")
        throw invalid("gateway_uuid is required", { field: "gateway_uuid" });
      const columns = [...Object.keys(set), "modified"];
      // Copied in, not spread over `set`: on Node 20's V8 each key added to a spread copy costs
      // microseconds, and every check-in comes here.
      const values: Record<string, unknown> = {
        modified: ctx.clock.now(),
        uuidLc: gatewayUuid.toLowerCase(),
      };
      for (const column in set) values[column] = set[column];
      const run = async () =>
        (
          await templated(
            tx,
            `gateways.update ${columns.join(",")}`,
            () =>
              tx.db
                .updateTable("gateways")
                .set(Object.fromEntries(columns.map((c) => [c, param(c)])))
                .where("gateway_uuid_lc", "=", param<string>("uuidLc"))
                .returningAll(),
            values,
          )
        )[0];
      let r = await run();
      if (r === undefined) {
        await ensureGateway(tx, gatewayUuid);
        r = await run();
      }
      // Not reached: ensureGateway made the row, in this transaction.
      if (r === undefined) throw notFound("gateway", { gateway_uuid: gatewayUuid });
      return toGatewayRow(ctx, r);
    });

  return {
    async get(gatewayUuid) {
      const r = await byUuid(ctx, gatewayUuid);
      return r === undefined ? null : toGatewayRow(ctx, r);
    },
    async getForAccount(accountId, gatewayUuid) {
      const r = await byUuid(ctx, gatewayUuid);
      return r === undefined || r.account_id !== accountId ? null : toGatewayRow(ctx, r);
    },
    associate(accountId, gatewayUuid, assignedOn) {
      return atomic(ctx, async (tx) => {
        const gw = await ensureGateway(tx, gatewayUuid);
        if (gw.account_id !== null && gw.account_id !== accountId) {
          throw conflict(`gateway ${gatewayUuid} belongs to another account`, {
            field: "gateway_uuid",
            value: gatewayUuid,
          });
        }
        if (gw.account_id === accountId) return toGatewayRow(ctx, gw);
        const r = await tx.db
          .updateTable("gateways")
          .set({
            account_id: accountId,
            assigned_on: assignedOn ?? ctx.clock.now(),
            modified: ctx.clock.now(),
          })
          .where("id", "=", gw.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return toGatewayRow(ctx, r);
      });
    },
    updateStatus(gatewayUuid, status) {
      checkStatus(status);
      // The fields the check-in carries; set one by one (a chain of conditional spreads costs
      // microseconds per check-in on Node 20's V8).
      const set: Record<string, unknown> = {};
      if (status.lastSignalStrength !== undefined) {
        set.last_signal_strength = status.lastSignalStrength;
      }
      if (status.lastCheckinTime !== undefined) set.last_checkin_time = status.lastCheckinTime;
      if (status.firmwareVersion !== undefined) set.firmware_version = status.firmwareVersion;
      if (status.bootloaderVersion !== undefined) {
        set.bootloader_version = status.bootloaderVersion;
      }
      if (status.provisioned !== undefined) set.provisioned = ctx.d.toBool(status.provisioned);
      return update(gatewayUuid, set);
    },
    async getMany(gatewayUuids) {
      const rows = await templatedIn(
        ctx,
        "gateways.byUuids",
        [...new Set(gatewayUuids.map((u) => u.toLowerCase()))],
        (list) => ctx.db.selectFrom("gateways").selectAll().where("gateway_uuid_lc", "in", list),
      );
      return rows.map((r) => toGatewayRow(ctx, r));
    },
    recordMeasurement(gatewayUuid, at) {
      return recordMeasurements(ctx, new Map([[gatewayUuid, at]]));
    },
    recordMeasurements: (latest) => recordMeasurements(ctx, latest),
    setShipped: (gatewayUuid, shippedOn) => update(gatewayUuid, { shipped_on: shippedOn }),
    async list(accountId, filter, page) {
      let q = ctx.db.selectFrom("gateways").selectAll().where("account_id", "=", accountId);
      if (filter?.lastMeasurementIsNull !== undefined) {
        q = q.where("last_measurement", filter.lastMeasurementIsNull ? "is" : "is not", null);
      }
      if (filter?.shippedOnIsNull !== undefined) {
        q = q.where("shipped_on", filter.shippedOnIsNull ? "is" : "is not", null);
      }
      const ordering = filter?.ordering;
      if (ordering !== undefined && !GATEWAY_ORDERINGS.includes(ordering)) {
        throw invalid(`unknown ordering "${ordering}"`, { field: "ordering", value: ordering });
      }
      let ordered = q;
      if (ordering !== undefined) {
        const column = ordering.replace(/^-/, "") as
          | "assigned_on"
          | "shipped_on"
          | "last_measurement";
        // Django on PostgreSQL emits no NULLS clause, so PostgreSQL's defaults apply: nulls
        // sort as larger than any value, last ascending and first descending. Spelled out so
        // SQLite (nulls smallest) places them the same.
        ordered = ordering.startsWith("-")
          ? q.orderBy(column, (ob) => ob.desc().nullsFirst())
          : q.orderBy(column, (ob) => ob.asc().nullsLast());
      }
      const rows = await paged(ordered.orderBy("created").orderBy("id"), page).execute();
      const total = page?.count ? await countOf(q) : undefined;
      return {
        rows: rows.map((r) => toGatewayRow(ctx, r)),
        ...(total === undefined ? {} : { total }),
      };
    },
  };
}
