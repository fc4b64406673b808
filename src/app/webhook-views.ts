import { formatTable } from "../catalogue/text-table.ts";
import { printable } from "../core/printable.ts";
import type { DeliverySummary } from "../store/types-webhooks.ts";
import type { DeliveryDetail } from "../webhooks/manual.ts";
import { type attemptJson, deliveryDetailJson, deliveryJson } from "./webhook-log.ts";

/**
 * Terminal and --json renderings of the webhook delivery log for `rpmlab webhooks`. What an
 * endpoint answered (its snippet, an error that quotes it) and the endpoint a client registered
 * come from outside the lab: the terminal is shown them through printable() (C0, DEL, C1).
 */

export function renderDeliveries(rows: readonly DeliverySummary[], json: boolean): string {
  if (json) return JSON.stringify(rows.map(deliveryJson), null, 2);
  if (rows.length === 0) return "no webhook deliveries";
  return formatTable(
    ["CREATED", "EVENT", "STATE", "ATTEMPTS", "LAST ATTEMPT", "DELIVERY", "WEBHOOK"],
    rows.map((d) => {
      const j = deliveryJson(d);
      return [
        j.created,
        j.event,
        stateText(j),
        String(j.attempts),
        j.last_attempt === null ? "" : outcome(j.last_attempt),
        j.id,
        j.webhook_id,
      ];
    }),
  );
}

export function renderDelivery(detail: DeliveryDetail, json: boolean): string {
  const j = deliveryDetailJson(detail);
  if (json) return JSON.stringify(j, null, 2);
  const about = [
    j.hwi_device_id === null ? null : `device ${j.hwi_device_id}`,
    j.patient_id === null ? null : `patient ${j.patient_id}`,
    j.measurement_ids === null ? null : `measurements ${j.measurement_ids.join(", ")}`,
  ].filter((x) => x !== null);
  const lines = [
    `delivery ${j.id}: ${j.event}${j.test ? " (test)" : ""}, ${stateText(j, false)} after ${j.attempts} attempt${j.attempts === 1 ? "" : "s"}`,
    `webhook ${j.webhook_id}${about.length > 0 ? `; ${about.join("; ")}` : ""}`,
    `created ${j.created}${j.next_attempt_at === null ? "" : `; next attempt ${j.next_attempt_at}`}`,
    "attempts:",
    ...(j.attempt_log.length === 0
      ? ["  none yet"]
      : j.attempt_log.map(
          (a) =>
            `  #${a.number} ${a.at}${a.manual ? " (resend)" : ""}${a.endpoint === null ? "" : ` ${printable(a.endpoint)}`} → ${outcome(a)}${a.response_snippet === null ? "" : ` ${printable(JSON.stringify(a.response_snippet))}`}`,
        )),
    "body:",
    ...JSON.stringify(j.body, null, 2)
      .split("\n")
      .map((line) => `  ${line}`),
  ];
  return lines.join("\n");
}

/** "pending (in flight)", "not_retried (test)". */
function stateText(j: ReturnType<typeof deliveryJson>, withTest = true): string {
  const notes = [j.in_flight ? "in flight" : null, withTest && j.test ? "test" : null];
  const said = notes.filter((n) => n !== null);
  return said.length === 0 ? j.state : `${j.state} (${said.join(", ")})`;
}

function outcome(a: ReturnType<typeof attemptJson>): string {
  // No endpoint: no request was made (the webhook was deleted), so no latency either.
  if (a.endpoint === null) return `no request: ${printable(a.error ?? "none made")}`;
  const what = a.status_code === null ? printable(a.error ?? "no answer") : String(a.status_code);
  return `${what} in ${a.latency_ms} ms`;
}
