import { atomic, type Ctx, conflict, notFound, templatedIn } from "../context.ts";
import { readNum, readNumOrNull, writeJson } from "../dialect.ts";
import { param } from "../query-templates.ts";
import type { DevicesRepo } from "../store.ts";
import type { DevicePatch, DeviceWithPatient } from "../types.ts";
import { checkSlotFree, slotOf, toDeviceRow } from "./device-rows.ts";
import { addHardwareLog, hardwareOps } from "./devices-hardware.ts";
import { listDevices, withPatients } from "./devices-list.ts";

async function checkPatient(ctx: Ctx, accountId: string, patientId: number | null | undefined) {
  if (patientId === null || patientId === undefined) return;
  const p = await ctx.db
    .selectFrom("patients")
    .select("id")
    .where("id", "=", patientId)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  if (p === undefined) throw notFound("patient", { id: patientId });
}

/** Spec 2.4 / 4.3: devices, with their nested patient. */
export function devicesRepo(ctx: Ctx): DevicesRepo {
  const { db, d } = ctx;
  const getRow = (c: Ctx, accountId: string, id: string) =>
    c.db
      .selectFrom("devices")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();

  return {
    create(accountId, input) {
      return atomic(ctx, async (tx) => {
        const id = input.id ?? ctx.ids.uuid();
        const hardwareUuid = input.hardwareUuid ?? null;
        const slot = slotOf(input.sensorCode ?? null, input.sensorId ?? null);
        await checkPatient(tx, accountId, input.patientId);
        await checkSlotFree(tx, hardwareUuid, slot, id);
        const now = ctx.clock.now();
        const r = await tx.db
          .insertInto("devices")
          .values({
            id,
            account_id: accountId,
            name: input.name,
            sensor_code: input.sensorCode ?? null,
            hardware_uuid: hardwareUuid,
            hardware_uuid_lc: hardwareUuid?.toLowerCase() ?? null,
            sensor_id: input.sensorId ?? null,
            slot,
            patient_id: input.patientId ?? null,
            status: input.status,
            require_signature: d.toBool(input.requireSignature ?? false),
            ship_gateway_only: d.toBool(input.shipGatewayOnly ?? false),
            meta_data: writeJson(input.metaData),
            created: now,
            modified: now,
          })
          .onConflict((oc) => oc.doNothing())
          .returningAll()
          .executeTakeFirst();
        if (r === undefined) throw conflict(`device ${id} already exists`, { id });
        if (hardwareUuid !== null) {
          await addHardwareLog(tx, accountId, {
            deviceId: id,
            previousHardwareUuid: null,
            hardwareUuid,
            reason: "activation",
          });
        }
        return toDeviceRow(ctx, r);
      });
    },
    async get(accountId, id) {
      const r = await getRow(ctx, accountId, id);
      if (r === undefined) return null;
      const [withPatient] = await withPatients(ctx, [toDeviceRow(ctx, r)]);
      return withPatient as DeviceWithPatient;
    },
    list: (accountId, filter, page) => listDevices(ctx, accountId, filter ?? {}, page),
    update(accountId, id, patch: DevicePatch, opts) {
      return atomic(ctx, async (tx) => {
        const current = await getRow(tx, accountId, id);
        if (current === undefined) throw notFound("device", { id });
        const pick = <K extends keyof DevicePatch>(k: K, fallback: DevicePatch[K]) =>
          patch[k] === undefined ? fallback : patch[k];
        const hardwareUuid = pick("hardwareUuid", current.hardware_uuid) ?? null;
        const sensorCode = pick("sensorCode", current.sensor_code) ?? null;
        const sensorId = pick("sensorId", current.sensor_id) ?? null;
        const slot = slotOf(sensorCode, sensorId);
        await checkPatient(tx, accountId, patch.patientId);
        await checkSlotFree(tx, hardwareUuid, slot, id);
        const r = await tx.db
          .updateTable("devices")
          .set({
            name: pick("name", current.name),
            sensor_code: sensorCode,
            hardware_uuid: hardwareUuid,
            hardware_uuid_lc: hardwareUuid?.toLowerCase() ?? null,
            sensor_id: sensorId,
            slot,
            patient_id: pick("patientId", readNumOrNull(current.patient_id)) ?? null,
            status: pick("status", current.status),
            ...(patch.requireSignature === undefined
              ? {}
              : { require_signature: d.toBool(patch.requireSignature) }),
            ...(patch.shipGatewayOnly === undefined
              ? {}
              : { ship_gateway_only: d.toBool(patch.shipGatewayOnly) }),
            ...(patch.metaData === undefined ? {} : { meta_data: writeJson(patch.metaData) }),
            modified: ctx.clock.now(),
          })
          .where("id", "=", id)
          .returningAll()
          .executeTakeFirstOrThrow();
        if (hardwareUuid !== current.hardware_uuid) {
          await addHardwareLog(tx, accountId, {
            deviceId: id,
            previousHardwareUuid: current.hardware_uuid,
            hardwareUuid,
            reason: opts?.reason ?? "update",
            patientId: readNumOrNull(current.patient_id),
          });
        }
        return toDeviceRow(ctx, r);
      });
    },
    async delete(accountId, id) {
      const result = await db
        .deleteFrom("devices")
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async findByHardware(match) {
      let q = db
        .selectFrom("devices")
        .selectAll()
        .where("hardware_uuid_lc", "=", match.hardwareUuid.toLowerCase())
        .where("sensor_code", match.sensorCode === null ? "is" : "=", match.sensorCode);
      if (match.sensorId !== undefined) {
        q = q.where("sensor_id", match.sensorId === null ? "is" : "=", match.sensorId);
      }
      const r = await q.orderBy("created").orderBy("id").executeTakeFirst();
      return r === undefined ? null : toDeviceRow(ctx, r);
    },
    async findAllByHardware(hardwareUuids, status) {
      // Ingestion resolves and adoption looks up gateways with it at every message and
      // check-in: built once per list shape (query-templates.ts).
      const rows = await templatedIn(
        ctx,
        `devices.byHardware${status === undefined ? "" : " status"}`,
        [...new Set(hardwareUuids.map((u) => u.toLowerCase()))],
        (list) => {
          const q = db.selectFrom("devices").selectAll().where("hardware_uuid_lc", "in", list);
          return status === undefined ? q : q.where("status", "=", param<string>("status"));
        },
        status === undefined ? {} : { status },
      );
      rows.sort(
        (a, b) =>
          readNum(a.created) - readNum(b.created) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
      return withPatients(
        ctx,
        rows.map((r) => toDeviceRow(ctx, r)),
      );
    },
    async getManyById(ids) {
      const rows = await templatedIn(ctx, "devices.byId", [...new Set(ids)], (list) =>
        db.selectFrom("devices").selectAll().where("id", "in", list),
      );
      return withPatients(
        ctx,
        rows.map((r) => toDeviceRow(ctx, r)),
      );
    },
    ...hardwareOps(ctx),
  };
}
