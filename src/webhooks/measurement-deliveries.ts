import type { DeviceNow } from "../store/store-webhooks.ts";
import type { MeasurementRow, WebhookRow } from "../store/types-ingest.ts";
import type { NewDelivery } from "../store/types-webhooks.ts";
import { byReading, measurementWebhookRecord } from "./payloads/measurement.ts";
import { measurementTargets } from "./routing.ts";
import type { StatusMetrics } from "./status-metrics.ts";

export interface MeasurementBatch {
  readonly accountId: string;
  /** The records stored, by id. */
  readonly rows: readonly MeasurementRow[];
  /** The account's MEASUREMENT webhooks. */
  readonly webhooks: readonly WebhookRow[];
  /** The rows' devices as they are now: gateway or IMEI, and measurement_webhook_id. */
  readonly devices: ReadonlyMap<string, DeviceNow>;
  /** Spec 6.3.3, the account's choice. */
  readonly omitStatusMetrics: boolean;
  readonly statusMetrics: StatusMetrics;
}

/**
 * The deliveries of stored measurements: routed per device (spec 6.3), status metrics left out
 * when the account asked (6.3.3), then one delivery per record, or with post_as_array one per
 * physical reading carrying its records as an array (wire-formats "Webhook registry"). Retried
 * (spec 6.1). A record's `hardware_uuid` is its device's current gateway or IMEI, null once
 * unlinked (spec 6.2): a reading a replaced or unlinked gateway relays late names where the
 * device is now, not the gateway it came through (the stored record and GET keep that one).
 */
export function measurementDeliveries(batch: MeasurementBatch): NewDelivery[] {
  const perWebhook = new Map<string, MeasurementRow[]>();
  for (const row of batch.rows) {
    if (batch.omitStatusMetrics && batch.statusMetrics.isStatus(row.deviceName, row.metric)) {
      continue;
    }
    const route = row.deviceId === null ? undefined : batch.devices.get(row.deviceId)?.route;
    for (const webhook of measurementTargets(batch.webhooks, route)) {
      const rows = perWebhook.get(webhook.id);
      if (rows === undefined) perWebhook.set(webhook.id, [row]);
      else rows.push(row);
    }
  }
  const out: NewDelivery[] = [];
  for (const webhook of batch.webhooks) {
    const rows = perWebhook.get(webhook.id);
    if (rows === undefined) continue;
    const groups = webhook.postAsArray ? byReading(rows) : rows.map((row) => [row]);
    for (const group of groups) {
      const records = group.map((row) => {
        const device = row.deviceId === null ? undefined : batch.devices.get(row.deviceId);
        return measurementWebhookRecord(
          row,
          device === undefined ? row.hardwareUuid : device.hardwareUuid,
        );
      });
      const first = group[0]!;
      out.push({
        accountId: batch.accountId,
        webhookId: webhook.id,
        event: "MEASUREMENT",
        // Spec 6.1 / wire-formats: an array only for a webhook that posts arrays.
        body: JSON.stringify(webhook.postAsArray ? records : records[0]),
        retry: true,
        hwiDeviceId: first.deviceId,
        patientId: first.patientExternalId,
        measurementIds: group.map((row) => row.id),
      });
    }
  }
  return out;
}
