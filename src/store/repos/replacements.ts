import type { Selectable } from "kysely";
import { type Ctx, countOf, notFound, paged } from "../context.ts";
import { readNum, readNumOrNull, writeJson } from "../dialect.ts";
import type { ReplacementsTable } from "../schema.ts";
import type { ReplacementsRepo } from "../store.ts";
import type { ReplacementRow } from "../types-hardware.ts";

function toReplacementRow(ctx: Ctx, r: Selectable<ReplacementsTable>): ReplacementRow {
  return {
    id: r.id,
    accountId: r.account_id,
    deviceId: r.device_id,
    deviceTypes: (ctx.d.readJson(r.device_types) as string[] | null) ?? [],
    shippingName: r.shipping_name,
    shippingAddress: r.shipping_address,
    shippingCity: r.shipping_city,
    shippingState: r.shipping_state,
    shippingZipCode: r.shipping_zip_code,
    notifyEmails: r.notify_emails,
    previousHardwareUuid: r.previous_hardware_uuid,
    newHardwareUuid: r.new_hardware_uuid,
    status: r.status,
    created: readNum(r.created),
    modified: readNum(r.modified),
    shippedOn: readNumOrNull(r.shipped_on),
    deliveredOn: readNumOrNull(r.delivered_on),
    trackingLink: r.tracking_link,
  };
}

/** hwi-replacements (spec 4.3; wire-formats "Replacements"). */
export function replacementsRepo(ctx: Ctx): ReplacementsRepo {
  const { db } = ctx;
  return {
    async create(accountId, input) {
      const device = await db
        .selectFrom("devices")
        .select("id")
        .where("account_id", "=", accountId)
        .where("id", "=", input.deviceId)
        .executeTakeFirst();
      if (device === undefined) throw notFound("device", { id: input.deviceId });
      const now = ctx.clock.now();
      const r = await db
        .insertInto("replacements")
        .values({
          id: input.id ?? ctx.ids.uuid(),
          account_id: accountId,
          device_id: input.deviceId,
          device_types: writeJson(input.deviceTypes) ?? "[]",
          shipping_name: input.shippingName ?? null,
          shipping_address: input.shippingAddress ?? null,
          shipping_city: input.shippingCity ?? null,
          shipping_state: input.shippingState ?? null,
          shipping_zip_code: input.shippingZipCode ?? null,
          notify_emails: input.notifyEmails ?? null,
          previous_hardware_uuid: input.previousHardwareUuid ?? null,
          new_hardware_uuid: null,
          status: input.status ?? null,
          created: now,
          modified: now,
          shipped_on: null,
          delivered_on: null,
          tracking_link: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toReplacementRow(ctx, r);
    },
    async get(accountId, id) {
      const r = await db
        .selectFrom("replacements")
        .selectAll()
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .executeTakeFirst();
      return r === undefined ? null : toReplacementRow(ctx, r);
    },
    async list(accountId, filter, page) {
      let q = db.selectFrom("replacements").selectAll().where("account_id", "=", accountId);
      if (filter?.deviceId !== undefined) q = q.where("device_id", "=", filter.deviceId);
      const rows = await paged(q.orderBy("created").orderBy("id"), page).execute();
      const total = page?.count ? await countOf(q) : undefined;
      return {
        rows: rows.map((r) => toReplacementRow(ctx, r)),
        ...(total === undefined ? {} : { total }),
      };
    },
    async update(accountId, id, patch) {
      const r = await db
        .updateTable("replacements")
        .set({
          ...(patch.previousHardwareUuid === undefined
            ? {}
            : { previous_hardware_uuid: patch.previousHardwareUuid }),
          ...(patch.newHardwareUuid === undefined
            ? {}
            : { new_hardware_uuid: patch.newHardwareUuid }),
          ...(patch.status === undefined ? {} : { status: patch.status }),
          ...(patch.shippedOn === undefined ? {} : { shipped_on: patch.shippedOn }),
          ...(patch.deliveredOn === undefined ? {} : { delivered_on: patch.deliveredOn }),
          ...(patch.trackingLink === undefined ? {} : { tracking_link: patch.trackingLink }),
          modified: patch.modified ?? ctx.clock.now(),
        })
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst();
      if (r === undefined) throw notFound("replacement", { id });
      return toReplacementRow(ctx, r);
    },
    async delete(accountId, id) {
      const result = await db
        .deleteFrom("replacements")
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
