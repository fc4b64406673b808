import type { Selectable } from "kysely";
import { atomic, type Ctx, notFound } from "../context.ts";
import { readNum, readNumOrNull } from "../dialect.ts";
import type { DevicesTable, HardwareLogsTable } from "../schema.ts";
import type { DevicesRepo } from "../store.ts";
import type { HardwareChange, HardwareLogReason, HardwareLogRow } from "../types.ts";
import { checkSlotFree, toDeviceRow } from "./device-rows.ts";

export interface HardwareLogEntry {
  readonly deviceId: string;
  readonly previousHardwareUuid: string | null;
  readonly hardwareUuid: string | null;
  readonly reason: HardwareLogReason;
  /** The device's patient before the change (devices.patient_id), kept with a departure. */
  readonly patientId?: number | null;
}

export function toHardwareLogRow(r: Selectable<HardwareLogsTable>): HardwareLogRow {
  return {
    id: readNum(r.id),
    accountId: r.account_id,
    deviceId: r.device_id,
    previousHardwareUuid: r.previous_hardware_uuid,
    previousPatientExternalId: r.previous_patient_external_id ?? null,
    hardwareUuid: r.hardware_uuid,
    reason: r.reason as HardwareLogReason,
    created: readNum(r.created),
  };
}

/** One hwi-hardware-uuid-logs record: every change of a device's hardware_uuid is logged. */
export async function addHardwareLog(
  ctx: Ctx,
  accountId: string,
  entry: HardwareLogEntry,
): Promise<HardwareLogRow> {
  const departedPatient =
    entry.previousHardwareUuid === null || entry.patientId == null
      ? undefined
      : await ctx.db
          .selectFrom("patients")
          .select("external_id")
          .where("id", "=", entry.patientId)
          .executeTakeFirst();
  const r = await ctx.db
    .insertInto("hardware_logs")
    .values({
      account_id: accountId,
      device_id: entry.deviceId,
      previous_hardware_uuid: entry.previousHardwareUuid,
      previous_hardware_uuid_lc: entry.previousHardwareUuid?.toLowerCase() ?? null,
      previous_patient_external_id: departedPatient?.external_id ?? null,
      hardware_uuid: entry.hardwareUuid,
      reason: entry.reason,
      created: ctx.clock.now(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toHardwareLogRow(r);
}

/** Moves devices to `to` (null: unlink), logging each change, in one transaction. */
async function move(
  ctx: Ctx,
  accountId: string,
  devices: readonly Selectable<DevicesTable>[],
  to: string | null,
  reason: HardwareLogReason,
  status: string | undefined,
): Promise<HardwareChange[]> {
  const changes: HardwareChange[] = [];
  for (const current of devices) {
    await checkSlotFree(ctx, to, current.slot, current.id);
    const r = await ctx.db
      .updateTable("devices")
      .set({
        hardware_uuid: to,
        hardware_uuid_lc: to?.toLowerCase() ?? null,
        ...(status === undefined ? {} : { status }),
        modified: ctx.clock.now(),
      })
      .where("id", "=", current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await addHardwareLog(ctx, accountId, {
      deviceId: current.id,
      previousHardwareUuid: current.hardware_uuid,
      hardwareUuid: to,
      reason,
      patientId: readNumOrNull(current.patient_id),
    });
    changes.push({ device: toDeviceRow(ctx, r), previousHardwareUuid: current.hardware_uuid });
  }
  return changes;
}

/** Spec 3 and 4.2–4.3: unlink (hardware_uuid becomes null) and gateway replacement. */
export function hardwareOps(
  ctx: Ctx,
): Pick<DevicesRepo, "unlinkGateway" | "unlinkDevice" | "replaceHardware"> {
  const onGateway = (c: Ctx, accountId: string, gatewayUuid: string) =>
    c.db
      .selectFrom("devices")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("hardware_uuid_lc", "=", gatewayUuid.toLowerCase())
      .orderBy("created")
      .orderBy("id")
      .execute();
  return {
    unlinkGateway(accountId, gatewayUuid, opts) {
      return atomic(ctx, async (tx) =>
        move(
          tx,
          accountId,
          await onGateway(tx, accountId, gatewayUuid),
          null,
          "unlink",
          opts?.status,
        ),
      );
    },
    unlinkDevice(accountId, id, opts) {
      return atomic(ctx, async (tx) => {
        const current = await tx.db
          .selectFrom("devices")
          .selectAll()
          .where("account_id", "=", accountId)
          .where("id", "=", id)
          .executeTakeFirst();
        if (current === undefined) return null;
        const [change] = await move(tx, accountId, [current], null, "unlink", opts?.status);
        return change ?? null;
      });
    },
    replaceHardware(accountId, fromUuid, toUuid, opts) {
      return atomic(ctx, async (tx) => {
        const devices = await onGateway(tx, accountId, fromUuid);
        if (devices.length === 0) throw notFound("device on gateway", { hardware_uuid: fromUuid });
        return move(tx, accountId, devices, toUuid, "replacement", opts?.status);
      });
    },
  };
}
