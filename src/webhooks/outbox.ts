import type { PendingEvent } from "../fulfilment/events.ts";
import { fulfilmentWebhookBody } from "../fulfilment/events.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { MeasurementRow } from "../store/types-ingest.ts";
import type { IdRange } from "../store/types-webhooks.ts";
import { type PatientWebhookBody, patientWebhookBody } from "./payloads/patient.ts";
import { specialOrderWebhookBody } from "./payloads/special-order.ts";

/**
 * Writing webhook events to the outbox, always inside the transaction of the change that causes
 * them (issue 4 §1: an event is never lost, and never sent for a change that rolled back). The
 * dispatcher turns them into deliveries later, in its own transaction.
 */

/**
 * Measurements a transaction stored (ingestion, orphans attached at activation): one outbox
 * entry per account naming the ids as runs, never a row per measurement — ingestion writes
 * thousands a second. Nothing for readings no account owns yet (orphans).
 */
export async function recordStoredMeasurements(
  tx: StoreRepositories,
  rows: readonly MeasurementRow[],
): Promise<void> {
  if (rows.length === 0) return;
  const byAccount = new Map<string, number[]>();
  for (const row of rows) {
    if (row.accountId === null) continue;
    const ids = byAccount.get(row.accountId);
    if (ids === undefined) byAccount.set(row.accountId, [row.id]);
    else ids.push(row.id);
  }
  for (const [accountId, ids] of byAccount) {
    await tx.webhookOutbox.add({ accountId, event: "MEASUREMENT", ranges: idRuns(ids) });
  }
}

/** Ids as runs of consecutive values: a batch of one account's rows is usually one run. */
export function idRuns(ids: readonly number[]): IdRange[] {
  const sorted = [...ids].sort((a, b) => a - b);
  const runs: [number, number][] = [];
  for (const id of sorted) {
    const last = runs.at(-1);
    if (last !== undefined && id <= last[1] + 1) last[1] = Math.max(last[1], id);
    else runs.push([id, id]);
  }
  return runs;
}

/**
 * The webhook-worthy events a device service gathered in its transaction (atomically()):
 * fulfilment statuses (FULFILLMENT, spec 6.2), replacement orders (SPECIAL_ORDER, spec 6.1) and
 * patients written through a device (PATIENT, spec 6.1).
 * New statuses emitted through `fulfilment.status` need nothing more here.
 */
export async function recordDeviceEvents(
  tx: StoreRepositories,
  events: readonly PendingEvent[],
): Promise<void> {
  for (const event of events) {
    if (event.name === "fulfilment.status") {
      const e = event.payload;
      await tx.webhookOutbox.add({
        accountId: e.accountId,
        event: "FULFILLMENT",
        body: fulfilmentWebhookBody(e),
        hwiDeviceId: e.device.id,
        patientId: e.patientExternalId,
      });
    } else if (event.name === "patient.written") {
      const { action, patient } = event.payload;
      await recordPatientChange(
        tx,
        patient.accountId,
        patientWebhookBody(action, patient, patient.modified),
      );
    } else if (event.name === "replacement.status") {
      const e = event.payload;
      const device = await tx.devices.get(e.accountId, e.replacement.deviceId);
      const patientId = device?.patient?.externalId ?? null;
      await tx.webhookOutbox.add({
        accountId: e.accountId,
        event: "SPECIAL_ORDER",
        body: specialOrderWebhookBody(e, patientId),
        hwiDeviceId: e.replacement.deviceId,
        patientId,
      });
    }
  }
}

/** A patient created, updated or deleted (spec 6.1 patient webhooks). */
export function recordPatientChange(
  tx: StoreRepositories,
  accountId: string,
  body: PatientWebhookBody,
): Promise<void> {
  return tx.webhookOutbox.add({ accountId, event: "PATIENT", body, patientId: body.patient_id });
}
