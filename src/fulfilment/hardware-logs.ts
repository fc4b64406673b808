import type { Store } from "../store/store.ts";
import type {
  HardwareLogReason,
  HardwareLogRow,
  ListOptions,
  ListResult,
  Ms,
} from "../store/types.ts";

/**
 * An hwi-hardware-uuid-logs record (spec 2.7: "fields of hardware UUID log records: not shown";
 * rpmlab's choice). One per change of a device's hardware_uuid: reason activation (the device
 * was created on hardware), update, replacement (spec 4.3), unlink (spec 4.2) or shipment (a
 * request got the hardware it was shipped with). Times epoch ms.
 */
export interface HardwareLogRecord {
  readonly id: number;
  readonly hwi_device_id: string;
  readonly previous_hardware_uuid: string | null;
  readonly hardware_uuid: string | null;
  readonly reason: HardwareLogReason;
  readonly created: Ms;
}

export function hardwareLogRecord(row: HardwareLogRow): HardwareLogRecord {
  return {
    id: row.id,
    hwi_device_id: row.deviceId,
    previous_hardware_uuid: row.previousHardwareUuid,
    hardware_uuid: row.hardwareUuid,
    reason: row.reason,
    created: row.created,
  };
}

/** GET hwi-hardware-uuid-logs/ (spec 4.3): the account's log, oldest first. */
export class HardwareLogs {
  constructor(private readonly deps: { readonly store: Store }) {}

  async list(
    accountId: string,
    filter: { readonly hwiDeviceId?: string } = {},
    page?: ListOptions,
  ): Promise<ListResult<HardwareLogRecord>> {
    const result = await this.deps.store.hardwareLogs.list(
      accountId,
      filter.hwiDeviceId === undefined ? {} : { deviceId: filter.hwiDeviceId },
      page,
    );
    const rows = result.rows.map(hardwareLogRecord);
    return result.total === undefined ? { rows } : { rows, total: result.total };
  }
}
