import { type Selectable, sql } from "kysely";
import { type Ctx, containsIgnoringCase, countOf, notFound, paged } from "../context.ts";
import { readNum, readNumOrNull } from "../dialect.ts";
import type { SupplyRequestsTable } from "../schema-asr.ts";
import type { SupplyRequestsRepo } from "../store-asr.ts";
import type { SupplyOrigin, SupplyRequestRow, SupplyRequestStatus } from "../types-asr.ts";

/** Columns `search` looks in: every field of the order a client sees (spec 4.5). */
const SEARCHED = [
  "id",
  "supply_name",
  "gateway_id",
  "imei",
  "related_device_id",
  "patient_external_id",
  "origin",
  "shipping_name",
  "shipping_address",
  "shipping_city",
  "shipping_state",
  "shipping_zip_code",
  "notify_emails",
  "status",
  "carrier",
  "tracking_number",
  "tracking_link",
  "up_front_cost",
  "shipping_cost",
] as const;

/** Its dates, searched as the API writes them (created_on, updated_on, shipped_on, delivered_on). */
const DATES = ["created", "modified", "shipped_on", "delivered_on"] as const;

function toRow(r: Selectable<SupplyRequestsTable>): SupplyRequestRow {
  return {
    id: r.id,
    accountId: r.account_id,
    supplyTypeId: r.supply_type_id,
    supplyName: r.supply_name,
    gatewayId: r.gateway_id,
    imei: r.imei,
    hardwareUuid: r.hardware_uuid,
    relatedDeviceId: r.related_device_id,
    forDeviceId: r.for_device_id,
    patientExternalId: r.patient_external_id,
    shippingName: r.shipping_name,
    shippingAddress: r.shipping_address,
    shippingCity: r.shipping_city,
    shippingState: r.shipping_state,
    shippingZipCode: r.shipping_zip_code,
    notifyEmails: r.notify_emails,
    origin: r.origin as SupplyOrigin,
    strips: readNumOrNull(r.strips),
    upFrontCost: r.up_front_cost,
    shippingCost: r.shipping_cost,
    status: r.status as SupplyRequestStatus,
    step: readNum(r.step),
    nextAt: readNumOrNull(r.next_at),
    carrier: r.carrier,
    trackingNumber: r.tracking_number,
    trackingLink: r.tracking_link,
    created: readNum(r.created),
    modified: readNum(r.modified),
    shippedOn: readNumOrNull(r.shipped_on),
    deliveredOn: readNumOrNull(r.delivered_on),
  };
}

/** ASR supply requests (spec 2.7, 4.5): the orders and their shipping timeline. */
export function supplyRequestsRepo(ctx: Ctx): SupplyRequestsRepo {
  const { db } = ctx;
  return {
    async create(accountId, input) {
      const now = ctx.clock.now();
      const id = ctx.ids.uuid();
      const r = await db
        .insertInto("supply_requests")
        .values({
          id,
          account_id: accountId,
          supply_type_id: input.supplyTypeId,
          supply_name: input.supplyName,
          gateway_id: input.gatewayId,
          imei: input.imei,
          hardware_uuid: input.hardwareUuid,
          related_device_id: input.relatedDeviceId,
          for_device_id: input.forDeviceId,
          patient_external_id: input.patientExternalId,
          shipping_name: input.shippingName,
          shipping_address: input.shippingAddress,
          shipping_city: input.shippingCity,
          shipping_state: input.shippingState,
          shipping_zip_code: input.shippingZipCode,
          notify_emails: input.notifyEmails,
          origin: input.origin,
          strips: input.strips,
          up_front_cost: input.upFrontCost,
          shipping_cost: input.shippingCost,
          status: "pending",
          step: 0,
          next_at: input.nextAt(id),
          carrier: null,
          tracking_number: null,
          tracking_link: null,
          created: now,
          modified: now,
          shipped_on: null,
          delivered_on: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRow(r);
    },
    async get(accountId, id) {
      const r = await db
        .selectFrom("supply_requests")
        .selectAll()
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .executeTakeFirst();
      return r === undefined ? null : toRow(r);
    },
    async getById(id) {
      const r = await db
        .selectFrom("supply_requests")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return r === undefined ? null : toRow(r);
    },
    async list(accountId, filter, page) {
      let q = db.selectFrom("supply_requests").selectAll().where("account_id", "=", accountId);
      if (filter?.fulfilled !== undefined) {
        q = q.where("status", "=", filter.fulfilled ? "fulfilled" : "pending");
      }
      if (filter?.forDeviceId !== undefined) q = q.where("for_device_id", "=", filter.forDeviceId);
      if (filter?.origin !== undefined) q = q.where("origin", "=", filter.origin);
      if (filter?.undelivered) q = q.where("delivered_on", "is", null);
      if (filter?.search !== undefined && filter.search !== "") {
        const search = filter.search;
        q = q.where(({ or }) =>
          or([
            ...SEARCHED.map((c) => containsIgnoringCase(ctx, c, search)),
            containsIgnoringCase(ctx, sql`cast(strips as text)`, search),
            ...DATES.map((c) => containsIgnoringCase(ctx, ctx.d.isoText(c), search)),
            ...(filter.searchSupplyTypeIds?.length
              ? [sql<boolean>`supply_type_id in (${sql.join(filter.searchSupplyTypeIds)})`]
              : []),
          ]),
        );
      }
      const rows = await paged(q.orderBy("created", "desc").orderBy("id", "desc"), page).execute();
      const total = page?.count ? await countOf(q) : undefined;
      return { rows: rows.map(toRow), ...(total === undefined ? {} : { total }) };
    },
    async update(id, patch) {
      const r = await db
        .updateTable("supply_requests")
        .set({
          ...(patch.status === undefined ? {} : { status: patch.status }),
          ...(patch.nextAt === undefined ? {} : { next_at: patch.nextAt }),
          ...(patch.carrier === undefined ? {} : { carrier: patch.carrier }),
          ...(patch.trackingNumber === undefined ? {} : { tracking_number: patch.trackingNumber }),
          ...(patch.trackingLink === undefined ? {} : { tracking_link: patch.trackingLink }),
          ...(patch.shippedOn === undefined ? {} : { shipped_on: patch.shippedOn }),
          ...(patch.deliveredOn === undefined ? {} : { delivered_on: patch.deliveredOn }),
          step: sql`step + 1`,
          modified: patch.modified ?? ctx.clock.now(),
        })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst();
      if (r === undefined) throw notFound("supply request", { id });
      return toRow(r);
    },
    async delete(accountId, id) {
      const result = await db
        .deleteFrom("supply_requests")
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .where("status", "=", "pending")
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async due(until, limit) {
      let q = db.selectFrom("supply_requests").selectAll().where("next_at", "is not", null);
      if (until !== undefined) q = q.where("next_at", "<=", until);
      const ordered = q.orderBy("next_at").orderBy("id");
      const rows = await paged(ordered, limit === undefined ? undefined : { limit }).execute();
      return rows.map(toRow);
    },
    async stripsShipped(accountId, deviceIds) {
      if (deviceIds.length === 0) return 0;
      const row = await db
        .selectFrom("supply_requests")
        .select((eb) => eb.fn.sum<number>("strips").as("n"))
        .where("account_id", "=", accountId)
        .where("for_device_id", "in", deviceIds)
        .where("status", "=", "fulfilled")
        .executeTakeFirst();
      return readNum(row?.n ?? 0);
    },
    async shippedBetween(from, to, accountId) {
      let q = db
        .selectFrom("supply_requests")
        .selectAll()
        .where("shipped_on", ">=", from)
        .where("shipped_on", "<", to);
      if (accountId !== undefined) q = q.where("account_id", "=", accountId);
      const rows = await q.orderBy("shipped_on").orderBy("id").execute();
      return rows.map(toRow);
    },
  };
}
