import { MEASUREMENT_WEBHOOK_ID } from "../fulfilment/device-properties.ts";
import type { Store, StoreRepositories } from "../store/store.ts";
import type { WebhookRow } from "../store/types-ingest.ts";
import type { DeliveryRow, NewDelivery, OutboxEntry } from "../store/types-webhooks.ts";
import { measurementDeliveries } from "./measurement-deliveries.ts";
import type { StatusMetrics } from "./status-metrics.ts";

/** Outbox entries read per transaction (at most). */
export const EXPAND_BATCH = 100;

export interface Expansion {
  /** Outbox entries expanded (and deleted). */
  readonly taken: number;
  /** Entries may be left: the batch was full, or the lanes were. */
  readonly more: boolean;
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
 *
 * With `claim`, entries are expanded one by one until a lane has no room left: a backlog stays
 * in the outbox (one small row per ingested batch) and becomes deliveries as the endpoints take
 * them, mostly created claimed, instead of thousands of pending rows to claim one by one later.
 */
export async function expandOutbox(
  store: Store,
  statusMetrics: StatusMetrics,
  claim?: CreateClaimed,
): Promise<Expansion> {
  const none: Expansion = { taken: 0, more: false, created: [], claimed: [] };
  // A read first: an empty outbox (every poll, most nudges) takes no write lock. On SQLite the
  // transaction below waits for the one writer, the ingestion worker's batches included.
  if ((await store.webhookOutbox.count()) === 0) return none;
  return store.transaction(async (tx) => {
    const entries = await tx.webhookOutbox.take(EXPAND_BATCH);
    if (entries.length === 0) return none;
    const accounts = new AccountWebhooks(tx);
    const deliveries: NewDelivery[] = [];
    const held: boolean[] = [];
    let taken = 0;
    let full = false;
    while (taken < entries.length && !full) {
      const entry = entries[taken++]!;
      const { webhooks, byId, omitStatusMetrics } = await accounts.of(entry.accountId);
      const made = [
        ...(await measurementsOf(tx, entry, webhooks, omitStatusMetrics, statusMetrics)),
        ...othersOf(entry, webhooks),
      ];
      for (const d of made) {
        const reserved = claim?.reserve(byId.get(d.webhookId)!) ?? false;
        if (claim !== undefined && !reserved) full = true;
        // Object.assign, not a spread: on Node 20's V8 a key added to a spread copy costs
        // microseconds, once per delivery here.
        deliveries.push(reserved ? Object.assign({}, d, { nextAttemptAt: claim!.until }) : d);
        held.push(reserved);
      }
    }
    const created =
      deliveries.length === 0 ? [] : await tx.webhookDeliveries.createMany(deliveries);
    await tx.webhookOutbox.delete(entries.slice(0, taken).map((e) => e.id));
    return {
      taken,
      more: entries.length === EXPAND_BATCH || taken < entries.length,
      created,
      claimed: created.flatMap((delivery, i) =>
        held[i] ? [{ delivery, webhook: accounts.webhook(delivery.webhookId)! }] : [],
      ),
    };
  });
}

/** The webhooks of each account as registered now, read once per transaction. */
class AccountWebhooks {
  private readonly accounts = new Map<
    string,
    {
      webhooks: readonly WebhookRow[];
      byId: Map<string, WebhookRow>;
      /** Spec 6.3.3, the account's choice. */
      omitStatusMetrics: boolean;
    }
  >();
  private readonly all = new Map<string, WebhookRow>();

  constructor(private readonly tx: StoreRepositories) {}

  async of(accountId: string) {
    let known = this.accounts.get(accountId);
    if (known === undefined) {
      const webhooks = await this.tx.webhooks.list(accountId);
      const account = await this.tx.accounts.get(accountId);
      known = {
        webhooks,
        byId: new Map(webhooks.map((w) => [w.id, w])),
        omitStatusMetrics: account?.omitStatusMetrics ?? false,
      };
      for (const w of webhooks) this.all.set(w.id, w);
      this.accounts.set(accountId, known);
    }
    return known;
  }

  webhook(id: string): WebhookRow | undefined {
    return this.all.get(id);
  }
}

async function measurementsOf(
  tx: StoreRepositories,
  entry: OutboxEntry,
  webhooks: readonly WebhookRow[],
  omitStatusMetrics: boolean,
  statusMetrics: StatusMetrics,
): Promise<NewDelivery[]> {
  const { accountId } = entry;
  const targets = webhooks.filter((w) => w.event === "MEASUREMENT");
  const ranges = entry.event === "MEASUREMENT" ? (entry.ranges ?? []) : [];
  if (targets.length === 0 || ranges.length === 0) return [];
  const rows = await tx.webhookOutbox.measurements(accountId, ranges);
  const devices = [...new Set(rows.flatMap((r) => (r.deviceId === null ? [] : [r.deviceId])))];
  return measurementDeliveries({
    accountId,
    rows,
    webhooks: targets,
    devices: await tx.webhookOutbox.devicesNow(devices, MEASUREMENT_WEBHOOK_ID),
    omitStatusMetrics,
    statusMetrics,
  });
}

/** Fulfilment, special-order and patient events: one delivery per webhook of the kind. */
function othersOf(entry: OutboxEntry, webhooks: readonly WebhookRow[]): NewDelivery[] {
  if (entry.event === "MEASUREMENT") return [];
  return webhooks
    .filter((w) => w.event === entry.event)
    .map((w) => ({
      accountId: entry.accountId,
      webhookId: w.id,
      event: entry.event,
      body: JSON.stringify(entry.body),
      // Spec 6.1: not on the automatic retry path.
      retry: false,
      hwiDeviceId: entry.hwiDeviceId,
      patientId: entry.patientId,
    }));
}
