import type { WebhookRow } from "../store/types-ingest.ts";

/**
 * Spec 6.3, which MEASUREMENT webhooks get a device's measurements:
 * - the device property measurement_webhook_id names a webhook: that webhook only, whatever its
 *   enabled_by_default (6.3.2) — and none when that webhook was deleted or made another kind
 *   since (the property still names it: set it to "" to route the device to every webhook again);
 * - the property absent or "": every webhook with enabled_by_default true (6.3.1, 6.3.2).
 * enabled_by_default is the measurement webhooks' flag (6.3.1); the other kinds get every event
 * of their kind.
 */
export function measurementTargets(
  measurementWebhooks: readonly WebhookRow[],
  route: string | undefined,
): WebhookRow[] {
  const named = route?.trim().toLowerCase() ?? "";
  if (named !== "") return measurementWebhooks.filter((w) => w.id === named);
  return measurementWebhooks.filter((w) => w.enabledByDefault);
}
