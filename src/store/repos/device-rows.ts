import type { Selectable } from "kysely";
import { type Ctx, conflict } from "../context.ts";
import { readBool, readNum, readNumOrNull } from "../dialect.ts";
import type { DevicesTable } from "../schema.ts";
import type { DeviceRow } from "../types.ts";

export function toDeviceRow(ctx: Ctx, r: Selectable<DevicesTable>): DeviceRow {
  return {
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    sensorCode: r.sensor_code,
    hardwareUuid: r.hardware_uuid,
    sensorId: r.sensor_id,
    patientId: readNumOrNull(r.patient_id),
    status: r.status,
    requireSignature: readBool(r.require_signature),
    shipGatewayOnly: readBool(r.ship_gateway_only),
    metaData: ctx.d.readJson(r.meta_data),
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}

/**
 * A device's place on its gateway. With the lower-cased hardware_uuid it forms a unique key:
 * one device per sensor code per gateway, several when their sensor ids differ (spec 2.8).
 */
export function slotOf(sensorCode: string | null, sensorId: string | null): string {
  return `${sensorCode ?? ""}/${sensorId ?? ""}`;
}

/** Throws a conflict when another device holds the slot. */
export async function checkSlotFree(
  ctx: Ctx,
  hardwareUuid: string | null,
  slot: string,
  exceptId: string,
): Promise<void> {
  if (hardwareUuid === null) return;
  const other = await ctx.db
    .selectFrom("devices")
    .select(["id", "sensor_code"])
    .where("hardware_uuid_lc", "=", hardwareUuid.toLowerCase())
    .where("slot", "=", slot)
    .where("id", "!=", exceptId)
    .executeTakeFirst();
  if (other !== undefined) {
    throw conflict(
      `gateway ${hardwareUuid} already has a device with sensor code ${other.sensor_code ?? "(none)"}`,
      { field: "hardware_uuid", value: hardwareUuid, device: other.id },
    );
  }
}
