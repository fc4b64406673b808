import { RpmlabError } from "../../core/errors.ts";
import type { WebhookEvent } from "../../store/types-ingest.ts";
import type { ScenarioAccount } from "../types.ts";
import type { LabClient } from "./lab-client.ts";

/**
 * A scenario account as its file describes it, through the lab's own APIs as a user would set
 * it up: the account, its choice to leave status metrics out of webhooks (spec 6.3.3), supply
 * replenishment with its thresholds, and its webhooks, one HWI webhook per event (`url: lab`
 * posts to the run's receiver, at `labUrl`). Returns, per scenario webhook id, the HWI webhook
 * ids registered for it by event. Anything the lab refuses ends the run (E_SCENARIO_FAILED).
 */
export async function setUpAccount(
  client: LabClient,
  account: ScenarioAccount,
  labUrl: (webhookId: string) => string,
): Promise<Map<string, Map<WebhookEvent, string>>> {
  await client.account(account.id);
  if (account.stripStatusMetrics) {
    await client.admin("PATCH", `/lab/v1/accounts/${account.id}/`, { omit_status_metrics: true });
  }
  if (account.asr !== undefined) {
    await client.admin("PATCH", `/lab/v1/accounts/${account.id}/`, { asr_enabled: true });
    const thresholds = account.asr.autoReorder;
    if (thresholds !== undefined) {
      const set = await client.admin(
        "PUT",
        `/lab/v1/accounts/${account.id}/auto-reorder/`,
        thresholds,
      );
      if (set.status !== 200) {
        throw new RpmlabError(
          "E_SCENARIO_FAILED",
          `account ${account.id}: auto_reorder refused: ${JSON.stringify(set.body)}`,
        );
      }
    }
  }
  const registered = new Map<string, Map<WebhookEvent, string>>();
  for (const webhook of account.webhooks) {
    const ids = new Map<WebhookEvent, string>();
    for (const event of webhook.events) {
      const created = await client.hwi<{ id: string }>(account.id, "POST", "/hwi/webhooks/", {
        endpoint: webhook.url === "lab" ? labUrl(webhook.id) : webhook.url,
        event,
        post_as_array: webhook.postAsArray,
        enabled_by_default: webhook.enabledByDefault,
        ...(webhook.auth === undefined
          ? {}
          : { auth_header: webhook.auth.header, auth_key: webhook.auth.key }),
        ...(webhook.sign ? { signing_secret: true } : {}),
      });
      if (created.status !== 201) {
        throw new RpmlabError(
          "E_SCENARIO_FAILED",
          `registering webhook ${webhook.id} (${event}): ${created.status} ${JSON.stringify(created.body)}`,
        );
      }
      ids.set(event, created.body.id);
    }
    registered.set(webhook.id, ids);
  }
  return registered;
}
