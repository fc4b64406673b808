import { MEASUREMENT_WEBHOOK_ID } from "../fulfilment/device-properties.ts";
import type { Store, StoreRepositories } from "../store/store.ts";
import type { WebhookRow } from "../store/types-ingest.ts";
import type { DeliveryRow, NewDelivery, OutboxEntry } from "../store/types-webhooks.ts";
import { measurementDeliveries } from "./measurement-deliveries.ts";
import type { StatusMetrics } from "./status-metrics.ts";

/** Outbox entries per transaction. */
export const EXPAND_BATCH = 100;

export interface Expansion {
  /** Outbox entries taken (fewer than EXPAND_BATCH: the outbox is empty now). */
  readonly taken: number;
  readonly created: readonly DeliveryRow[];
  /** Those created already claimed (due at the claim's end), with their webhook. */
  readonly claimed: readonly { readonly delivery: DeliveryRow; readonly webhook: WebhookRow }[];
}

/**
 * Deliveries a dispatcher can start at once are created claimed, saving a claim each: `reserve`
 * says whether the webhook's lane has room for one more, and `until` is when such a claim lapses.
 */
export interface CreateClaimed {
  readonly reserve: (webhook: WebhookRow) => boolean;
  readonly until: number;
}

/**
 * Turns outbox entries into deliveries, in one transaction (issue 4 §1): the entries are taken
 * and deleted as their deliveries are created, so each event becomes its deliveries exactly
 * once, whatever process does it and whenever it stops. The webhooks are those registered at
 * this moment; a kind nobody listens to leaves nothing.
 */
export async function expandOutbox(
  store: Store,
  statusMetrics: StatusMetrics,
  claim?: CreateClaimed,
): Promise<Expansion> {
  // A read first: an empty outbox (every poll, most nudges) takes no write lock. On SQLite the
  // transaction below waits for the one writer, the ingestion worker's batches included.
  if ((await store.webhookOutbox.count()) === 0) return { taken: 0, created: [], claimed: [] };
  return store.transaction(async (tx) => {
    const entries = await tx.webhookOutbox.take(EXPAND_BATCH);
    if (entries.length === 0) return { taken: 0, created: [], claimed: [] };
    const deliveries: NewDelivery[] = [];
    const byId = new Map<string, WebhookRow>();
    for (const [accountId, list] of byAccount(entries)) {
      const webhooks = await tx.webhooks.list(accountId);
      for (const w of webhooks) byId.set(w.id, w);
      deliveries.push(
        ...(await measurementsOf(tx, accountId, list, webhooks, statusMetrics)),
        ...othersOf(accountId, list, webhooks),
      );
    }
    const held = deliveries.map((d) => claim?.reserve(byId.get(d.webhookId)!) ?? false);
    const created =
      deliveries.length === 0
        ? []
        : await tx.webhookDeliveries.createMany(
            deliveries.map((d, i) => (held[i] ? { ...d, nextAttemptAt: claim!.until } : d)),
          );
    await tx.webhookOutbox.delete(entries.map((e) => e.id));
    return {
      taken: entries.length,
      created,
      claimed: created.flatMap((delivery, i) =>
        held[i] ? [{ delivery, webhook: byId.get(delivery.webhookId)! }] : [],
      ),
    };
  });
}

function byAccount(entries: readonly OutboxEntry[]): Map<string, OutboxEntry[]> {
  const out = new Map<string, OutboxEntry[]>();
  for (const entry of entries) {
    const list = out.get(entry.accountId);
    if (list === undefined) out.set(entry.accountId, [entry]);
    else list.push(entry);
  }
  return out;
}

async function measurementsOf(
  tx: StoreRepositories,
  accountId: string,
  entries: readonly OutboxEntry[],
  webhooks: readonly WebhookRow[],
  statusMetrics: StatusMetrics,
): Promise<NewDelivery[]> {
  const targets = webhooks.filter((w) => w.event === "MEASUREMENT");
  const ranges = entries.flatMap((e) => (e.event === "MEASUREMENT" ? (e.ranges ?? []) : []));
  if (targets.length === 0 || ranges.length === 0) return [];
  const rows = await tx.webhookOutbox.measurements(accountId, ranges);
  const devices = [...new Set(rows.flatMap((r) => (r.deviceId === null ? [] : [r.deviceId])))];
  const account = await tx.accounts.get(accountId);
  return measurementDeliveries({
    accountId,
    rows,
    webhooks: targets,
    routes: await tx.webhookOutbox.propertyValues(devices, MEASUREMENT_WEBHOOK_ID),
    omitStatusMetrics: account?.omitStatusMetrics ?? false,
    statusMetrics,
  });
}

/** Fulfilment, special-order and patient events: one delivery per webhook of the kind. */
function othersOf(
  accountId: string,
  entries: readonly OutboxEntry[],
  webhooks: readonly WebhookRow[],
): NewDelivery[] {
  return entries.flatMap((entry) =>
    entry.event === "MEASUREMENT"
      ? []
      : webhooks
          .filter((w) => w.event === entry.event)
          .map((w) => ({
            accountId,
            webhookId: w.id,
            event: entry.event,
            body: JSON.stringify(entry.body),
            // Spec 6.1: not on the automatic retry path.
            retry: false,
            hwiDeviceId: entry.hwiDeviceId,
            patientId: entry.patientId,
          })),
  );
}
