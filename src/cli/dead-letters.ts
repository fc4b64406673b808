import type { Command } from "commander";
import { renderDeadLetter, renderDeadLetters, renderReplay } from "../app/dead-letter-views.ts";
import {
  deadLetterDetail,
  deadLetterFilter,
  deleteDeadLetter,
  deleteDeadLetters,
  listDeadLetters,
  replayDeadLetter,
  replayJson,
} from "../app/dead-letters.ts";
import { withLabStore } from "../app/lab-store.ts";
import { Catalogue } from "../catalogue/catalogue.ts";
import { isRpmlabError, RpmlabError } from "../core/errors.ts";
import type { FieldErrors } from "../core/field-errors.ts";
import { MessageProcessor } from "../ingest/processor.ts";
import { replayWith } from "../ingest/replay.ts";
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
  source?: string;
  topicPrefix?: string;
  messageId?: string;
  since?: string;
  until?: string;
  limit: string;
  page?: string;
}

/**
 * `rpmlab dead-letters list|show|delete|purge|replay` (README "Dead letters"): what ingestion
 * could not use, on the store directly like `accounts` and `webhooks`, so they work whether or not
 * `rpmlab serve` runs on it. A replay runs the ingestion core (MessageProcessor) in this
 * process, on that store: no broker is needed.
 */
export function registerDeadLettersCommand(program: Command, io: CliIo): void {
  const deadLetters = program
    .command("dead-letters")
    .description("MQTT messages ingestion could not use: list, show, delete, purge, replay");

  deadLetters
    .command("list")
    .description("List dead letters, newest first, with the reason naming the field or byte")
    .option("--source <id>", "only those of this gateway uuid or IMEI")
    .option("--topic-prefix <text>", "only topics starting with this text (case-sensitive)")
    .option("--message-id <id>", "only those whose envelope names this message_id")
    .option("--since <iso>", "received at or after this date-time")
    .option("--until <iso>", "received before this date-time")
    .option("--limit <n>", LIST_LIMIT_HELP, LIST_LIMIT_DEFAULT)
    .option("--page <n>", LIST_PAGE_HELP)
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print a JSON array")
    .action(async (flags: ListFlags) => {
      const page = listPageOf(flags);
      const filter = await asUsage(async () =>
        deadLetterFilter({
          source: flags.source,
          topic_prefix: flags.topicPrefix,
          message_id: flags.messageId,
          since: flags.since,
          until: flags.until,
        }),
      );
      const listed = await withLabStore(flags.store, (store) =>
        listDeadLetters(store, filter, pageQuery(page)),
      );
      printPage(io, DEAD_LETTERS, page, listed, (rows) =>
        renderDeadLetters(rows, flags.json === true),
      );
    });

  deadLetters
    .command("show")
    .description("Show one: topic, reason, and the payload as text (when UTF-8) and base64")
    .argument("<id>")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print it as JSON")
    .action(async (id: string, flags: Flags) => {
      const row = await withLabStore(flags.store, (store) => deadLetterDetail(store, id));
      io.out(renderDeadLetter(row, flags.json === true));
    });

  deadLetters
    .command("delete")
    .description("Delete one")
    .argument("<id>")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print {deleted: id} as JSON")
    .action(async (id: string, flags: Flags) => {
      await withLabStore(flags.store, (store) => deleteDeadLetter(store, id));
      io.out(
        flags.json === true
          ? JSON.stringify({ deleted: Number(id) }, null, 2)
          : `dead letter ${id.trim()} deleted`,
      );
    });

  deadLetters
    .command("purge")
    .description(
      "Delete every dead letter the filters match, or all of them with --all (those older than 30 days of the lab's clock go by themselves, hourly, while a serve runs)",
    )
    .option("--source <id>", "only those of this gateway uuid or IMEI")
    .option("--topic-prefix <text>", "only topics starting with this text (case-sensitive)")
    .option("--message-id <id>", "only those whose envelope names this message_id")
    .option("--since <iso>", "received at or after this date-time")
    .option("--until <iso>", "received before this date-time")
    .option("--all", "every dead letter, when no filter is given")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print {deleted: n} as JSON")
    .action(async (flags: Omit<ListFlags, "limit" | "page"> & { all?: boolean }) => {
      const deleted = await asUsage(() =>
        withLabStore(flags.store, (store) =>
          deleteDeadLetters(store, {
            source: flags.source,
            topic_prefix: flags.topicPrefix,
            message_id: flags.messageId,
            since: flags.since,
            until: flags.until,
            all: flags.all === true,
          }),
        ),
      );
      io.out(
        flags.json === true
          ? JSON.stringify({ deleted }, null, 2)
          : `${deleted} dead letter${deleted === 1 ? "" : "s"} deleted`,
      );
    });

  deadLetters
    .command("replay")
    .description(
      "Run one through ingestion again, once its cause is fixed: stored readings remove it; a message that fails again is kept as a new dead letter with the new reason; a message id already ingested stores nothing",
    )
    .argument("<id>")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print the result as JSON")
    .action(async (id: string, flags: Flags) => {
      const catalogue = Catalogue.load();
      const result = await withLabStore(flags.store, (store, clock) =>
        replayDeadLetter(store, replayWith(new MessageProcessor({ store, catalogue }), clock), id),
      );
      io.out(renderReplay(result, flags.json === true));
      // A script replaying after a fix learns it did not work, as `webhooks resend` tells.
      const kept = replayJson(result).dead_letter;
      if (kept !== null) {
        throw new RpmlabError(
          "E_DEAD_LETTER_KEPT",
          `dead letter ${result.replayed.id} failed again, kept as dead letter ${kept.id}`,
          { deadLetter: kept.id },
        );
      }
    });
}

const DEAD_LETTERS = { one: "dead letter", many: "dead letters" };

/**
 * The filter's field errors (shared with the lab admin API, where they are a 400 keyed by query
 * parameter) as a usage error naming the flags: exit 2, as every other bad flag.
 */
async function asUsage<T>(build: () => Promise<T>): Promise<T> {
  try {
    return await build();
  } catch (error) {
    if (!isRpmlabError(error, "E_API_VALIDATION")) throw error;
    const fields = error.details.fields as FieldErrors;
    const problems = Object.entries(fields).map(
      ([field, messages]) => `--${field.replaceAll("_", "-")}: ${[messages].flat().join(" ")}`,
    );
    throw new RpmlabError("E_USAGE", problems.join("; "), { field: Object.keys(fields)[0] });
  }
}
