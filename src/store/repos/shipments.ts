import type { Selectable, Updateable } from "kysely";
import { type Ctx, conflict, countOf, invalid, notFound, paged } from "../context.ts";
import { readBool, readNum, readNumOrNull } from "../dialect.ts";
import type { ShipmentEventsTable, ShipmentsTable } from "../schema.ts";
import type { ShipmentsRepo } from "../store.ts";
import type {
  DeliveredVia,
  ShipmentEventRow,
  ShipmentKind,
  ShipmentPatch,
  ShipmentRow,
} from "../types-shipments.ts";

const KINDS: readonly ShipmentKind[] = ["device", "replacement"];

function toShipmentRow(r: Selectable<ShipmentsTable>): ShipmentRow {
  const boolOrNull = (v: unknown) => (v === null || v === undefined ? null : readBool(v));
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind as ShipmentKind,
    deviceId: r.device_id,
    replacementId: r.replacement_id,
    status: r.status,
    reason: r.reason,
    requireSignature: readBool(r.require_signature),
    shipGatewayOnly: readBool(r.ship_gateway_only),
    deliveryType: r.delivery_type,
    shipsDevice: boolOrNull(r.ships_device),
    shipsGateway: boolOrNull(r.ships_gateway),
    hardwareUuid: r.hardware_uuid,
    carrier: r.carrier,
    trackingNumber: r.tracking_number,
    trackingLink: r.tracking_link,
    step: readNum(r.step),
    scansPlanned: readNum(r.scans_planned),
    scansDone: readNum(r.scans_done),
    transitMs: readNum(r.transit_ms),
    attempts: readNum(r.attempts),
    nextStatus: r.next_status,
    nextAt: readNumOrNull(r.next_at),
    expectedDelivery: readNumOrNull(r.expected_delivery),
    shippedOn: readNumOrNull(r.shipped_on),
    deliveredOn: readNumOrNull(r.delivered_on),
    deliveredVia: r.delivered_via as DeliveredVia | null,
    signedBy: r.signed_by,
    halted: r.halted,
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}

function toEventRow(r: Selectable<ShipmentEventsTable>): ShipmentEventRow {
  return {
    id: readNum(r.id),
    shipmentId: r.shipment_id,
    status: r.status,
    at: readNum(r.at),
    detail: r.detail,
    location: r.location,
  };
}

/** Columns of a patch, in the table's names (undefined fields are left as they are). */
function columnsOf(ctx: Ctx, p: ShipmentPatch): Updateable<ShipmentsTable> {
  const bool = (v: boolean | null | undefined) =>
    v === undefined ? undefined : v === null ? null : ctx.d.toBool(v);
  const out: Updateable<ShipmentsTable> = {
    status: p.status,
    reason: p.reason,
    require_signature: bool(p.requireSignature) ?? undefined,
    ship_gateway_only: bool(p.shipGatewayOnly) ?? undefined,
    delivery_type: p.deliveryType,
    ships_device: bool(p.shipsDevice),
    ships_gateway: bool(p.shipsGateway),
    hardware_uuid: p.hardwareUuid,
    carrier: p.carrier,
    tracking_number: p.trackingNumber,
    tracking_link: p.trackingLink,
    step: p.step,
    scans_planned: p.scansPlanned,
    scans_done: p.scansDone,
    transit_ms: p.transitMs,
    attempts: p.attempts,
    next_status: p.nextStatus,
    next_at: p.nextAt,
    expected_delivery: p.expectedDelivery,
    shipped_on: p.shippedOn,
    delivered_on: p.deliveredOn,
    delivered_via: p.deliveredVia,
    signed_by: p.signedBy,
    halted: p.halted,
    modified: p.modified,
  };
  for (const key of Object.keys(out) as (keyof typeof out)[]) {
    if (out[key] === undefined) delete out[key];
  }
  return out;
}

/** Shipments of the fulfilment simulator (issue 4 §2) and their carrier history. */
export function shipmentsRepo(ctx: Ctx): ShipmentsRepo {
  const { db } = ctx;
  const getRow = (id: string) =>
    db.selectFrom("shipments").selectAll().where("id", "=", id).executeTakeFirst();

  return {
    async create(accountId, input) {
      if (!KINDS.includes(input.kind)) {
        throw invalid(`kind must be one of ${KINDS.join(", ")}`, { field: "kind" });
      }
      const now = ctx.clock.now();
      const r = await db
        .insertInto("shipments")
        .values({
          id: input.id,
          account_id: accountId,
          kind: input.kind,
          device_id: input.deviceId,
          replacement_id: input.replacementId ?? null,
          status: input.status,
          reason: input.reason ?? null,
          require_signature: ctx.d.toBool(input.requireSignature ?? false),
          ship_gateway_only: ctx.d.toBool(input.shipGatewayOnly ?? false),
          delivery_type: input.deliveryType ?? null,
          ships_device: null,
          ships_gateway: null,
          hardware_uuid: null,
          carrier: null,
          tracking_number: null,
          tracking_link: null,
          step: 0,
          scans_planned: 0,
          scans_done: 0,
          transit_ms: 0,
          attempts: 0,
          next_status: input.nextStatus ?? null,
          next_at: input.nextAt ?? null,
          expected_delivery: null,
          shipped_on: null,
          delivered_on: null,
          delivered_via: null,
          signed_by: null,
          halted: null,
          created: now,
          modified: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toShipmentRow(r);
    },
    async get(id) {
      const r = await getRow(id);
      return r === undefined ? null : toShipmentRow(r);
    },
    async list(filter, page) {
      let q = db.selectFrom("shipments").selectAll();
      if (filter?.accountId !== undefined) q = q.where("account_id", "=", filter.accountId);
      if (filter?.kind !== undefined) q = q.where("kind", "=", filter.kind);
      const status = filter?.status;
      if (typeof status === "string") q = q.where("status", "=", status);
      else if (status !== undefined) {
        if (status.length === 0) return { rows: [], ...(page?.count ? { total: 0 } : {}) };
        q = q.where("status", "in", [...status]);
      }
      const rows = await paged(q.orderBy("created").orderBy("id"), page).execute();
      const total = page?.count ? await countOf(q) : undefined;
      return { rows: rows.map(toShipmentRow), ...(total === undefined ? {} : { total }) };
    },
    async update(id, patch, opts) {
      let q = db
        .updateTable("shipments")
        .set({ modified: ctx.clock.now(), ...columnsOf(ctx, patch) })
        .where("id", "=", id);
      if (opts?.expectStep !== undefined) q = q.where("step", "=", opts.expectStep);
      const r = await q.returningAll().executeTakeFirst();
      if (r !== undefined) return toShipmentRow(r);
      if ((await getRow(id)) === undefined) throw notFound("shipment", { id });
      throw conflict(`shipment ${id} moved on meanwhile (expected step ${opts?.expectStep})`, {
        id,
        field: "step",
      });
    },
    async due(until, limit) {
      let q = db.selectFrom("shipments").selectAll().where("next_at", "is not", null);
      if (until !== undefined) q = q.where("next_at", "<=", until);
      const rows = await paged(q.orderBy("next_at").orderBy("id"), { limit }).execute();
      return rows.map(toShipmentRow);
    },
    async shippedBetween(from, to, accountId) {
      let q = db
        .selectFrom("shipments")
        .selectAll()
        .where("shipped_on", ">=", from)
        .where("shipped_on", "<", to);
      if (accountId !== undefined) q = q.where("account_id", "=", accountId);
      return (await q.orderBy("shipped_on").orderBy("id").execute()).map(toShipmentRow);
    },
    async addEvent(shipmentId, event) {
      const r = await db
        .insertInto("shipment_events")
        .values({
          shipment_id: shipmentId,
          status: event.status,
          at: event.at,
          detail: event.detail,
          location: event.location ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toEventRow(r);
    },
    async events(shipmentId) {
      const rows = await db
        .selectFrom("shipment_events")
        .selectAll()
        .where("shipment_id", "=", shipmentId)
        .orderBy("id")
        .execute();
      return rows.map(toEventRow);
    },
  };
}
