import { formatTable } from "../catalogue/text-table.ts";
import { printable } from "../core/printable.ts";
import type { DeadLetterRow } from "../store/types-ingest.ts";
import {
  deadLetterDetailJson,
  deadLetterJson,
  type ReplayResult,
  replayJson,
} from "./dead-letters.ts";

/** Terminal and --json renderings of dead letters for `rpmlab dead-letters`. */

/*
 * Text a device chose (its topic on a broker with a loose ACL, a key or payload a reason
 * quotes, the payload itself) goes through printable(): a payload of escape sequences neither
 * drives the terminal of whoever lists the dead letters nor breaks the table's columns.
 */

export function renderDeadLetters(rows: readonly DeadLetterRow[], json: boolean): string {
  if (json) return JSON.stringify(rows.map(deadLetterJson), null, 2);
  if (rows.length === 0) return "no dead letters";
  return formatTable(
    ["ID", "RECEIVED", "TOPIC", "MESSAGE ID", "BYTES", "REASON"],
    rows.map((row) => {
      const j = deadLetterJson(row);
      return [
        String(j.id),
        j.received,
        printable(j.topic),
        j.message_id ?? "",
        String(j.payload_size),
        printable(j.reason),
      ];
    }),
  );
}

export function renderDeadLetter(row: DeadLetterRow, json: boolean): string {
  const j = deadLetterDetailJson(row);
  if (json) return JSON.stringify(j, null, 2);
  return [
    `dead letter ${j.id}: ${printable(j.topic)}`,
    `received ${j.received}; message id ${j.message_id ?? "none"}; ${j.payload_size} bytes`,
    `reason: ${printable(j.reason)}`,
    ...(j.payload_text === null
      ? ["payload (text): not UTF-8"]
      : [
          "payload (text):",
          ...j.payload_text.split("\n").map((line) => `  ${printable(line, true)}`),
        ]),
    "payload (base64):",
    `  ${j.payload_base64}`,
  ].join("\n");
}

export function renderReplay(result: ReplayResult, json: boolean): string {
  const j = replayJson(result);
  if (json) return JSON.stringify(j, null, 2);
  const records = `${j.stored} record${j.stored === 1 ? "" : "s"} stored, ${j.duplicates} duplicate${j.duplicates === 1 ? "" : "s"}`;
  const head = `dead letter ${j.replayed_id} replayed`;
  switch (j.result) {
    case "stored":
      return `${head}: ${records}; the dead letter is removed`;
    case "dead_letter":
      return `${head}: failed again (${records}); kept as dead letter ${j.dead_letter!.id}: ${printable(j.dead_letter!.reason)}`;
    case "already_ingested":
      return `${head}: its message id was already ingested, nothing stored; the dead letter is removed`;
    case "applied":
      return `${head}: gateway status applied; the dead letter is removed`;
    case "ignored":
      return `${head}: a cleared retained status, nothing to apply; the dead letter is removed`;
  }
}
