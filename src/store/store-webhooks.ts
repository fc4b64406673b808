import type { ListOptions, ListResult, Ms } from "./types.ts";
import type {
  MeasurementRow,
  NewWebhook,
  WebhookEvent,
  WebhookPatch,
  WebhookRow,
} from "./types-ingest.ts";
import type {
  AttemptOutcome,
  AttemptRow,
  DeliveryFilter,
  DeliveryRow,
  DeliveryState,
  DeliverySummary,
  IdRange,
  NewDelivery,
  NewOutboxEntry,
  OutboxEntry,
} from "./types-webhooks.ts";

/** The webhook repositories of the storage boundary (store.ts): registry, outbox, deliveries. */
export interface WebhooksRepo {
  create(accountId: string, input: NewWebhook): Promise<WebhookRow>;
  get(accountId: string, id: string): Promise<WebhookRow | null>;
  /** For the dispatcher: these webhooks, any account; unknown ids left out. */
  getMany(ids: readonly string[]): Promise<WebhookRow[]>;
  list(accountId: string, filter?: { event?: WebhookEvent }): Promise<WebhookRow[]>;
  update(accountId: string, id: string, patch: WebhookPatch): Promise<WebhookRow>;
  delete(accountId: string, id: string): Promise<boolean>;
}

/**
 * Issue 4 §1: the transactional outbox of webhook events. `add` belongs in the transaction of
 * the change that causes the event; `take` and `delete` in the dispatcher's transaction.
 */
export interface WebhookOutboxRepo {
  add(entry: NewOutboxEntry): Promise<void>;
  /**
   * Up to `limit` entries, oldest first. Inside a transaction, and delete what it took in the
   * same one; on PostgreSQL entries another open transaction took are skipped.
   */
  take(limit: number): Promise<OutboxEntry[]>;
  delete(ids: readonly number[]): Promise<void>;
  count(): Promise<number>;
  /** The account's measurements in these id runs, by id, without their raw bytes (null). */
  measurements(accountId: string, ranges: readonly IdRange[]): Promise<MeasurementRow[]>;
  /**
   * What a measurement webhook needs of each device as it is now: its gateway or IMEI (null
   * once unlinked) and the value of its property `routeKey` (undefined when it has none).
   * Devices since deleted are left out.
   */
  devicesNow(deviceIds: readonly string[], routeKey: string): Promise<Map<string, DeviceNow>>;
}

/** A device as a measurement webhook sees it when the webhook is made (WebhookOutboxRepo). */
export interface DeviceNow {
  readonly hardwareUuid: string | null;
  readonly route: string | undefined;
}

/** Issue 4 §1: webhook deliveries (stable UUIDs) and their attempts. */
export interface WebhookDeliveriesRepo {
  /** New pending deliveries, due at `nextAttemptAt` (default now). */
  createMany(inputs: readonly NewDelivery[]): Promise<DeliveryRow[]>;
  get(accountId: string, id: string): Promise<DeliveryRow | null>;
  /** Newest first, each with its latest attempt. */
  list(
    accountId: string,
    filter?: DeliveryFilter,
    page?: ListOptions,
  ): Promise<ListResult<DeliverySummary>>;
  /** How many of the account's deliveries are in each state (the dashboard's totals), one scan. */
  countByState(accountId: string): Promise<Record<DeliveryState, number>>;
  /** Oldest first. */
  attempts(deliveryId: string): Promise<AttemptRow[]>;
  /** Webhooks with a pending delivery due at `now`, any account. */
  dueWebhooks(now: Ms): Promise<string[]>;
  /** When the earliest pending delivery is due (or its claim lapses); null when none is pending. */
  nextDue(): Promise<Ms | null>;
  /**
   * Claims up to `limit` of the webhook's due deliveries, oldest first: their next_attempt_at
   * becomes `until`, when the claim lapses unless an attempt is recorded first.
   */
  claim(webhookId: string, opts: { now: Ms; until: Ms; limit: number }): Promise<DeliveryRow[]>;
  /** Records attempts (numbered in order) and their deliveries' new states. */
  record(outcomes: readonly AttemptOutcome[]): Promise<void>;
  /** Gives claims back: these pending deliveries are due at `at`. */
  release(ids: readonly string[], at: Ms): Promise<void>;
  /** Deletes deliveries created before `before` that are no longer pending; how many. */
  prune(before: Ms): Promise<number>;
}
