import { WEBHOOK_EVENTS, type WebhookEvent } from "../../store/types-ingest.ts";
import { DELIVERY_STATES } from "../../store/types-webhooks.ts";
import type { WebhookCount } from "../observed.ts";
import type { ScenarioAccount } from "../types.ts";
import { type LabClient, labFailed } from "./lab-client.ts";

/**
 * Deliveries per scenario webhook, event and state, from the lab's delivery log. `registered`:
 * scenario webhook id → the HWI webhook ids registered for it, by event.
 */
export async function countWebhooks(
  client: LabClient,
  accounts: readonly ScenarioAccount[],
  registered: ReadonlyMap<string, ReadonlyMap<WebhookEvent, string>>,
): Promise<WebhookCount[]> {
  const out: WebhookCount[] = [];
  for (const account of accounts) {
    for (const webhook of account.webhooks) {
      for (const [event, hwiId] of registered.get(webhook.id) ?? []) {
        if (!WEBHOOK_EVENTS.includes(event)) continue;
        for (const state of DELIVERY_STATES) {
          const path = `/lab/v1/accounts/${account.id}/webhook-deliveries/?webhook_id=${hwiId}&state=${state}&page=1&page_size=1`;
          const answer = await client.admin<{ count: number }>("GET", path);
          // A log that cannot be read is no count of 0: `failed == 0` would hold by mistake.
          if (answer.status !== 200) throw labFailed(`GET ${path}`, answer);
          out.push({ webhook: webhook.id, event, state, count: answer.body.count });
        }
      }
    }
  }
  return out;
}
