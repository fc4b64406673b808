import type { Command } from "commander";
import { withLabStore } from "../app/lab-store.ts";
import {
  deliveryDetail,
  deliveryFilter,
  listDeliveries,
  resendDelivery,
  testWebhook,
} from "../app/webhook-log.ts";
import { renderDeliveries, renderDelivery } from "../app/webhook-views.ts";
import { DEFAULT_WEBHOOK_TIMEOUT_MS, parseWebhookTimeout } from "../config/webhook-config.ts";
import { isRpmlabError, RpmlabError } from "../core/errors.ts";
import { printable } from "../core/printable.ts";
import { Rng } from "../core/rng.ts";
import type { Store } from "../store/store.ts";
import type { DeliveryFilter } from "../store/types-webhooks.ts";
import type { DeliveryDetail } from "../webhooks/manual.ts";
import { ManualSends } from "../webhooks/manual.ts";
import { createWebhookSender } from "../webhooks/sender.ts";
import type { CliIo } from "./io.ts";
import {
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_HELP,
  LIST_PAGE_HELP,
  listPageOf,
  pageQuery,
  printPage,
} from "./list-limit.ts";
import { STORE_OPTION_HELP } from "./store-option.ts";

interface Flags {
  store?: string;
  json?: boolean;
}

interface ListFlags extends Flags {
  webhook?: string;
  state?: string;
  event?: string;
  device?: string;
  patient?: string;
  limit: string;
  page?: string;
}

/**
 * `rpmlab webhooks deliveries|delivery|resend|test`: the delivery log, resends and test sends.
 * Like `accounts` and `keys` they work on the store directly, so they work whether or not
 * `rpmlab serve` runs on it; a resend or test send posts from this process, with the same
 * headers and signature the dispatcher would use, and is logged in the store.
 */
export function registerWebhooksCommand(program: Command, io: CliIo): void {
  const webhooks = program
    .command("webhooks")
    .description("Webhook deliveries: the log, resends, test sends (README: Webhooks)");

  webhooks
    .command("deliveries")
    .description("List an account's webhook deliveries, newest first, with their last attempt")
    .argument("<client-domain>")
    .option("--webhook <id>", "only this webhook's")
    .option("--state <state>", "pending, delivered, failed or not_retried (any case)")
    .option("--event <kind>", "MEASUREMENT, FULFILLMENT, SPECIAL_ORDER or PATIENT (any case)")
    .option("--device <hwi-device-id>", "only those about this device")
    .option("--patient <external-id>", "only those about this patient")
    .option("--limit <n>", LIST_LIMIT_HELP, LIST_LIMIT_DEFAULT)
    .option("--page <n>", LIST_PAGE_HELP)
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print a JSON array")
    .action(async (domain: string, flags: ListFlags) => {
      const page = listPageOf(flags);
      const filter = filterOf(flags);
      const listed = await withLabStore(flags.store, (store) =>
        listDeliveries(store, domain, filter, pageQuery(page)),
      );
      printPage(io, DELIVERIES, page, listed, (rows) =>
        renderDeliveries(rows, flags.json === true),
      );
    });

  webhooks
    .command("delivery")
    .description("Show one delivery: its body and every attempt")
    .argument("<client-domain>")
    .argument("<delivery-id>")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print it as JSON")
    .action(async (domain: string, id: string, flags: Flags) => {
      const detail = await withLabStore(flags.store, (store) => deliveryDetail(store, domain, id));
      io.out(renderDelivery(detail, flags.json === true));
    });

  manualCommand(webhooks, io, {
    name: "resend",
    description:
      "Send a delivery again now (same delivery id and body); exit code 1 unless the endpoint answers 2xx",
    argument: "<delivery-id>",
    send: resendDelivery,
  });
  manualCommand(webhooks, io, {
    name: "test",
    description:
      "Send a test webhook (sample body, fixed test device id) to a webhook; exit code 1 unless it answers 2xx",
    argument: "<webhook-id>",
    send: testWebhook,
  });
}

/** `resend` and `test`: one attempt from this process, printed, exit code 1 unless 2xx. */
function manualCommand(
  webhooks: Command,
  io: CliIo,
  spec: {
    name: string;
    description: string;
    argument: string;
    send: (
      store: Store,
      manual: ManualSends,
      domain: string,
      id: string,
    ) => Promise<DeliveryDetail>;
  },
): void {
  webhooks
    .command(spec.name)
    .description(spec.description)
    .argument("<client-domain>")
    .argument(spec.argument)
    .option(
      "--timeout <duration>",
      "limit of the attempt, e.g. 10s",
      // Shown as README "rpmlab webhooks" and serve's --webhook-timeout write it (10s).
      `${DEFAULT_WEBHOOK_TIMEOUT_MS / 1000}s`,
    )
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print the delivery as JSON")
    .action(async (domain: string, id: string, flags: Flags & { timeout: string }) => {
      const detail = await manually(flags, (store, manual) => spec.send(store, manual, domain, id));
      report(io, detail, flags);
    });
}

/** Runs a manual send with a sender of this process, closed after. */
async function manually(
  flags: Flags & { timeout: string },
  fn: (store: Store, manual: ManualSends) => Promise<DeliveryDetail>,
): Promise<DeliveryDetail> {
  const sender = createWebhookSender("http", {
    timeoutMs: parseWebhookTimeout(flags.timeout, "--timeout"),
  });
  try {
    return await withLabStore(flags.store, (store, clock) =>
      fn(store, new ManualSends({ store, clock, rng: new Rng("rpmlab-cli"), sender })),
    );
  } finally {
    await sender.close();
  }
}

function report(io: CliIo, detail: DeliveryDetail, flags: Flags): void {
  io.out(renderDelivery(detail, flags.json === true));
  const last = detail.attempts.at(-1);
  const ok =
    last?.statusCode !== null &&
    last?.statusCode !== undefined &&
    last.statusCode < 300 &&
    last.statusCode >= 200;
  if (!ok) {
    // The error can quote the endpoint's answer: escaped as the delivery's lines are.
    const got = last?.statusCode ?? printable(last?.error ?? "no answer");
    // No endpoint in the attempt: nothing was posted (the webhook was deleted).
    const what =
      last?.endpoint === null
        ? `delivery ${detail.delivery.id} was not sent`
        : `the endpoint did not accept delivery ${detail.delivery.id}`;
    throw new RpmlabError("E_WEBHOOK_NOT_DELIVERED", `${what}: ${got}`, {
      delivery: detail.delivery.id,
    });
  }
}

const DELIVERIES = { one: "delivery", many: "deliveries" };

/** The flag of each of the log's filters (the API's query names them otherwise). */
const FILTER_FLAGS: Record<string, string> = {
  webhook_id: "webhook",
  hwi_device_id: "device",
  patient_id: "patient",
};

/**
 * The log's filters from the flags, as the admin API reads its query; a state or kind the log
 * does not know is a usage error (exit 2) naming the flag, before the store is opened.
 */
function filterOf(flags: ListFlags): DeliveryFilter {
  try {
    return deliveryFilter({
      webhook_id: flags.webhook,
      state: flags.state,
      event: flags.event,
      hwi_device_id: flags.device,
      patient_id: flags.patient,
    });
  } catch (error) {
    if (!isRpmlabError(error) || error.code !== "E_API_VALIDATION") throw error;
    // Each wrong filter, by its flag: the state and kind against their lists, the ids as UUIDs.
    const wrong = Object.entries(error.details.fields as Record<string, string[]>).map(
      ([field, messages]) => ({ flag: FILTER_FLAGS[field] ?? field, message: messages[0] }),
    );
    throw new RpmlabError(
      "E_USAGE",
      wrong.map(({ flag, message }) => `--${flag}: ${message}`).join(" "),
      { field: wrong[0]!.flag },
    );
  }
}
