import { MESSAGES } from "../core/drf-fields.ts";
import { RpmlabError } from "../core/errors.ts";
import { FieldErrorCollector } from "../core/field-errors.ts";
import { parseIso, toIsoMicros } from "../core/time.ts";
import type { MessageOutcome } from "../ingest/events.ts";
import type { Replay } from "../ingest/replay.ts";
import type { Store } from "../store/store.ts";
import type { ListOptions, ListResult } from "../store/types.ts";
import type { DeadLetterFilter, DeadLetterRow } from "../store/types-ingest.ts";

/**
 * The dead letters of ingestion (README "Dead letters"): list, show, delete, replay. Shared by
 * the lab admin API (/lab/v1/dead-letters/) and `rpmlab dead-letters`.
 */

/** Filters as the API's query and the CLI's flags name them. */
export interface DeadLetterQuery {
  readonly topic_prefix?: string | undefined;
  readonly source?: string | undefined;
  readonly message_id?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
}

/** Newest first: what failed last is what the person debugging a payload is looking for. */
export function deadLetterFilter(q: DeadLetterQuery): DeadLetterFilter {
  const filter: { -readonly [K in keyof DeadLetterFilter]: DeadLetterFilter[K] } = {
    newestFirst: true,
  };
  const given = (v: string | undefined) =>
    v === undefined || v.trim() === "" ? undefined : v.trim();
  const errors = new FieldErrorCollector();
  // A topic is matched as given (untrimmed: MQTT topics may hold spaces, [MQTT-4.7.3-1]).
  if (q.topic_prefix !== undefined && q.topic_prefix !== "") filter.topicPrefix = q.topic_prefix;
  // Matched in any case: a topic spelling the uuid in lower case is still that gateway's.
  const source = given(q.source);
  if (source !== undefined) {
    if (source.includes("/")) errors.add("source", "A gateway uuid or an IMEI, without '/'.");
    filter.source = source;
  }
  const messageId = given(q.message_id);
  if (messageId !== undefined) filter.messageId = messageId;
  for (const field of ["since", "until"] as const) {
    const text = given(q[field]);
    if (text === undefined) continue;
    const at = parseIso(text);
    if (at === undefined) errors.add(field, MESSAGES.dateTime);
    else filter[field] = at;
  }
  if (filter.since !== undefined && filter.until !== undefined && filter.until <= filter.since) {
    errors.add("until", "Must be later than since.");
  }
  errors.throwIfAny();
  return filter;
}

export function listDeadLetters(
  store: Store,
  filter: DeadLetterFilter,
  page?: ListOptions,
): Promise<ListResult<DeadLetterRow>> {
  return store.deadLetters.list(filter, page);
}

/** Ids are positive integers; anything else names no dead letter (404, as DRF's int lookups). */
function idOf(id: string | number): number | undefined {
  const n = typeof id === "number" ? id : /^\s*\d+\s*$/.test(id) ? Number(id) : Number.NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export function noDeadLetter(id: string | number): RpmlabError {
  return new RpmlabError("E_STORE_NOT_FOUND", `no dead letter ${id}`, {
    field: "dead_letter",
    value: String(id),
  });
}

export async function deadLetterDetail(store: Store, id: string | number): Promise<DeadLetterRow> {
  const n = idOf(id);
  const row = n === undefined ? null : await store.deadLetters.get(n);
  if (row === null) throw noDeadLetter(id);
  return row;
}

/**
 * Deletes every dead letter `q` matches, or all of them with `all`; how many. Without a filter
 * and without `all` nothing is deleted: a bulk delete says what it wipes (keyed `all`).
 */
export async function deleteDeadLetters(
  store: Store,
  q: DeadLetterQuery & { readonly all?: boolean },
): Promise<number> {
  const { newestFirst: _order, ...filter } = deadLetterFilter(q);
  if (Object.keys(filter).length === 0 && q.all !== true) {
    const errors = new FieldErrorCollector();
    errors.add("all", "Give a filter, or all to delete every dead letter.");
    errors.throwIfAny();
  }
  return store.deadLetters.deleteMany(filter);
}

export async function deleteDeadLetter(store: Store, id: string | number): Promise<void> {
  const n = idOf(id);
  if (n === undefined || !(await store.deadLetters.delete(n))) throw noDeadLetter(id);
}

/** What a replay did (the wire form: replayJson). */
export interface ReplayResult {
  readonly replayed: DeadLetterRow;
  readonly outcome: Exclude<MessageOutcome, { kind: "gone" }>;
}

/**
 * Runs a dead letter through ingestion again. Its row is removed in the same transaction
 * whatever happens; a message that fails again is kept as a new dead letter (new id, received
 * now) with the new reason, so a dead letter always says why its message failed last.
 */
export async function replayDeadLetter(
  store: Store,
  replay: Replay,
  id: string | number,
): Promise<ReplayResult> {
  const row = await deadLetterDetail(store, id);
  const outcome = await replay(
    { topic: row.topic, payload: row.payload },
    { deadLetterId: row.id, holdsClaim: row.holdsClaim },
  );
  // Deleted or replayed by someone else between the read and the replay's transaction.
  if (outcome.kind === "gone") throw noDeadLetter(id);
  return { replayed: row, outcome };
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The payload as text when it is UTF-8 (JSON envelopes are), else null. */
function payloadText(payload: Uint8Array): string | null {
  try {
    return utf8.decode(payload);
  } catch {
    return null;
  }
}

/** The wire form of a dead letter as lists show it. */
export function deadLetterJson(row: DeadLetterRow) {
  return {
    id: row.id,
    topic: row.topic,
    message_id: row.messageId,
    reason: row.reason,
    received: toIsoMicros(row.received),
    payload_size: row.payload.byteLength,
  };
}

/** One dead letter with its payload: as text when it is UTF-8, and always as base64. */
export function deadLetterDetailJson(row: DeadLetterRow) {
  return {
    ...deadLetterJson(row),
    payload_text: payloadText(row.payload),
    payload_base64: Buffer.from(row.payload).toString("base64"),
  };
}

/** The results of a replay, named for what the user sees. */
export const REPLAY_RESULTS = [
  "stored",
  "dead_letter",
  "already_ingested",
  "applied",
  "ignored",
] as const;

export function replayJson(result: ReplayResult) {
  const { outcome } = result;
  const kept =
    outcome.kind === "dead_letter" || outcome.kind === "uplink" ? outcome.deadLetter : null;
  const counts =
    outcome.kind === "uplink"
      ? { stored: outcome.stored, duplicates: outcome.duplicates }
      : { stored: 0, duplicates: 0 };
  const name: (typeof REPLAY_RESULTS)[number] =
    kept !== null
      ? "dead_letter"
      : outcome.kind === "uplink"
        ? "stored"
        : outcome.kind === "redelivered"
          ? "already_ingested"
          : outcome.kind === "status"
            ? "applied"
            : "ignored";
  return {
    replayed_id: result.replayed.id,
    result: name,
    ...counts,
    dead_letter: kept === null ? null : deadLetterDetailJson(kept),
  };
}

export type DeadLetterJson = ReturnType<typeof deadLetterJson>;
export type DeadLetterDetailJson = ReturnType<typeof deadLetterDetailJson>;
export type ReplayJson = ReturnType<typeof replayJson>;
