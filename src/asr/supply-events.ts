import type { PendingEvents } from "../fulfilment/events.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { SupplyRequestRow } from "../store/types-asr.ts";
import type { SupplyCatalogue } from "./supply-catalogue.ts";
import { supplyOrderJson } from "./supply-order-view.ts";

/**
 * A supply order placed, shipped or delivered, inside the transaction of the change: its
 * special-order webhook into the outbox (spec 6.1: "supply orders emit special order events";
 * issue 4 §1: never lost, never sent for a change that rolled back), and the event that re-arms
 * the shipping simulator and nudges the dispatcher once committed.
 */
export async function supplyOrderChanged(
  tx: StoreRepositories,
  events: PendingEvents,
  supplies: SupplyCatalogue,
  row: SupplyRequestRow,
): Promise<void> {
  await tx.webhookOutbox.add({
    accountId: row.accountId,
    event: "SPECIAL_ORDER",
    body: supplyOrderJson(row, supplies),
    // The device the order is for (the related one, else the one on the hardware it fits), as
    // patient_id is that device's patient: the delivery log's hwi_device_id filter finds it.
    hwiDeviceId: row.relatedDeviceId ?? row.forDeviceId,
    patientId: row.patientExternalId,
  });
  events.add("supply.status", {
    accountId: row.accountId,
    requestId: row.id,
    status: row.status,
    nextAt: row.nextAt,
  });
}
