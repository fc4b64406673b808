import type { Clock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import type { Store } from "../store/store.ts";
import type { AttemptRow, DeliveryRow } from "../store/types-webhooks.ts";
import { attemptDelivery } from "./attempt.ts";
import { testBody, testDeliveryKeys } from "./payloads/samples.ts";
import type { WebhookSender } from "./sender.ts";

export interface ManualDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly sender: WebhookSender;
}

export interface DeliveryDetail {
  readonly delivery: DeliveryRow;
  /** Oldest first. */
  readonly attempts: readonly AttemptRow[];
}

/**
 * What a user asks for by hand, through the lab admin API or the CLI: a resend of any delivery
 * (the real service's resend button) and a test send. Both make one attempt now, from the calling
 * process, and record it; neither is retried automatically.
 */
export class ManualSends {
  constructor(private readonly deps: ManualDeps) {}

  /**
   * One more attempt of a delivery, whatever its state, with the same delivery id and body, to
   * the webhook's endpoint as it is now. A success makes it delivered; a failure is logged and
   * changes nothing else (a pending delivery keeps its schedule).
   */
  async resend(accountId: string, deliveryId: string): Promise<DeliveryDetail> {
    const { store } = this.deps;
    const delivery = await store.webhookDeliveries.get(accountId, deliveryId);
    if (delivery === null) throw noDelivery(deliveryId);
    const [webhook] = await store.webhooks.getMany([delivery.webhookId]);
    return this.attempt(delivery, webhook ?? null, true);
  }

  /**
   * A test send (the dashboard's test button): a sample body of the webhook's kind about the
   * fixed test device, logged as a test delivery. Its one attempt is this process's alone: the
   * delivery is written not_retried with nothing due, so no dispatcher posts it as well while an
   * endpoint takes its time (a held delivery came due after a minute of the lab's clock, one wall
   * second in a demo); were this process to die before recording the attempt, the log keeps it
   * with none.
   */
  async test(accountId: string, webhookId: string): Promise<DeliveryDetail> {
    const { store, clock } = this.deps;
    const webhook = await store.webhooks.get(accountId, webhookId);
    if (webhook === null) {
      throw noWebhook(webhookId);
    }
    const account = await store.accounts.get(accountId);
    const body = testBody(webhook, clock.now(), account?.omitStatusMetrics ?? false);
    const [delivery] = await store.webhookDeliveries.createMany([
      {
        accountId,
        webhookId: webhook.id,
        event: webhook.event,
        body: JSON.stringify(body),
        retry: false,
        test: true,
        callerOnly: true,
        ...testDeliveryKeys(webhook.event),
      },
    ]);
    return this.attempt(delivery!, webhook, false);
  }

  private async attempt(
    delivery: DeliveryRow,
    webhook: Parameters<typeof attemptDelivery>[2],
    manual: boolean,
  ): Promise<DeliveryDetail> {
    const { store } = this.deps;
    const outcome = await attemptDelivery(this.deps, delivery, webhook, { manual });
    await store.transaction((tx) => tx.webhookDeliveries.record([outcome]));
    return {
      delivery: (await store.webhookDeliveries.get(delivery.accountId, delivery.id)) ?? delivery,
      attempts: await store.webhookDeliveries.attempts(delivery.id),
    };
  }
}

/** The delivery asked for is not in the account's log; its id quoted as given (an empty one too). */
export function noDelivery(id: string): RpmlabError {
  return new RpmlabError("E_STORE_NOT_FOUND", `no webhook delivery ${JSON.stringify(id)}`, {
    field: "delivery",
    value: id,
  });
}

/** A webhook id no webhook of the account has, quoted (an empty one read "no webhook "). */
export function noWebhook(id: string): RpmlabError {
  return new RpmlabError("E_STORE_NOT_FOUND", `no webhook ${JSON.stringify(id)}`, {
    field: "webhook",
    value: id,
  });
}
