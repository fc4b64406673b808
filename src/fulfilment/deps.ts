import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Clock } from "../core/clock.ts";
import type { Store, StoreRepositories } from "../store/store.ts";
import { recordDeviceEvents } from "../webhooks/outbox.ts";
import { type FulfilmentEventSink, PendingEvents } from "./events.ts";

/** What every device service is built from (DESIGN.md: dependencies passed explicitly). */
export interface DeviceServiceDeps {
  readonly store: Store;
  readonly catalogue: Catalogue;
  /** The same clock the store was opened with: event times and assigned_on/shipped_on. */
  readonly clock: Clock;
  readonly events: FulfilmentEventSink;
}

/**
 * Runs `fn` in one store transaction (all or nothing) and emits the events it gathered only once
 * the transaction committed. The webhook events among them (fulfilment statuses, replacement
 * orders) are written to the webhook outbox in that same transaction (issue 4 §1).
 */
export async function atomically<T>(
  deps: DeviceServiceDeps,
  fn: (tx: StoreRepositories, events: PendingEvents) => Promise<T>,
): Promise<T> {
  const events = new PendingEvents(deps.events);
  const result = await deps.store.transaction(async (tx) => {
    const value = await fn(tx, events);
    await recordDeviceEvents(tx, events.gathered);
    return value;
  });
  events.flush();
  return result;
}
