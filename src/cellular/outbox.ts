import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import type { Clock } from "../core/clock.ts";
import { ensureDirectory } from "../core/directory.ts";
import { RpmlabError } from "../core/errors.ts";
import { TypedEvents } from "../core/events.ts";
import type { Rng } from "../core/rng.ts";
import { MAX_READINGS } from "../mqtt/envelope.ts";
import { SqliteOutbox } from "./outbox-sqlite.ts";

/**
 * Store-and-forward (spec 1.1: a hub keeps readings while it is off the network and uploads them
 * when it is back). Items wait oldest first; the outbox is bounded, and when full the OLDEST
 * item is dropped and counted. Each item gets a sequence number when queued; a batch of items
 * is named by the range it covers, so a retry of the same items repeats the same message id
 * (the envelope's message_id, ingestion's first dedupe key) and a different set of items never
 * reuses one. Items leave only through remove(), after the broker's PUBACK.
 *
 * `T` must survive JSON (the disk outbox stores it as JSON text): see stored-reading.ts.
 */
export interface OutboxEntry<T> {
  /** Assigned when queued; strictly increasing for the outbox's whole life. */
  readonly seq: number;
  readonly queuedAt: number;
  readonly item: T;
}

export interface OutboxBatch<T> {
  /** Stable for these entries: `{incarnation}.{first}` or `{incarnation}.{first}-{last}`. */
  readonly messageId: string;
  readonly entries: readonly OutboxEntry<T>[];
  readonly firstSeq: number;
  readonly lastSeq: number;
}

export interface OutboxEvents<T = unknown> extends Record<string, unknown> {
  /**
   * A disk entry that cannot be read back (not JSON, or not an item: `check` said which field)
   * was moved to the file's set_aside table, kept as it was, so the entries after it still go.
   */
  setAside: { readonly seq: number; readonly error: RpmlabError };
  /**
   * The outbox was full: queuing an item dropped these, the oldest (counted in `dropped`), so
   * whoever queued them can say which readings will never be sent. On disk, one that does not
   * read back is left out (it is counted all the same).
   */
  dropped: { readonly entries: readonly OutboxEntry<T>[] };
}

export interface Outbox<T> {
  readonly events: TypedEvents<OutboxEvents<T>>;
  /** Entries set aside as unreadable, over the file's whole life (always 0 in memory). */
  readonly setAside: number;
  /** Most items held at once. */
  readonly capacity: number;
  /** Items held now. */
  readonly size: number;
  /** Items dropped because the outbox was full, over its whole life (kept on disk too). */
  readonly dropped: number;
  /**
   * Queues an item, dropping the oldest when full (the `dropped` event names them). Durable
   * (disk) once it returns.
   */
  enqueue(item: T): OutboxEntry<T>;
  /**
   * The oldest items, at most `max` (default MAX_READINGS) and none after `upToSeq` (to retry
   * exactly a batch that failed), or null when empty. Nothing is removed.
   */
  take(max?: number, upToSeq?: number): OutboxBatch<T> | null;
  /** Removes the batch's entries (those still held: some may have been dropped since). */
  remove(batch: OutboxBatch<T>): number;
  /**
   * Every entry held now, oldest first (what a unit sent back to the vendor takes with it): on
   * disk, those an earlier process queued too. Nothing is removed.
   */
  held(): OutboxEntry<T>[];
  /** Releases the file (disk outbox: unusable after; size, dropped and held() still read). */
  close(): void;
}

export interface OutboxOptions {
  readonly clock: Clock;
  /** The sender's seeded stream (fork it per outbox): a part of a new outbox's incarnation. */
  readonly rng: Rng;
  readonly capacity: number;
  /**
   * Directory of the disk outbox, `{dir}/{name}.outbox.db`, created if missing; undefined
   * keeps the outbox in memory (fleets, benches: nothing survives the process).
   */
  readonly dir?: string;
  /** The gateway uuid or IMEI the outbox belongs to. */
  readonly name: string;
  /**
   * What an item read back from disk must look like: the name of the first field at fault, or
   * undefined when it is an item. Entries that fail it are set aside (see OutboxEvents).
   */
  readonly check?: (item: unknown) => string | undefined;
}

/**
 * Opens the outbox of one gateway or device. A disk outbox reopened after a restart (or a kill)
 * holds every item whose enqueue() returned, with the same sequence numbers and message ids.
 */
export async function openOutbox<T>(options: OutboxOptions): Promise<Outbox<T>> {
  checkCapacity(options.capacity);
  if (options.dir === undefined) {
    return new MemoryOutbox<T>(options.clock, options.capacity, incarnationOf(options));
  }
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(options.name)) {
    throw new RpmlabError("E_USAGE", `an outbox name is letters, digits, _ and -`, {
      field: "name",
      value: options.name,
    });
  }
  outboxDirectory(options.dir);
  return SqliteOutbox.open<T>(
    join(options.dir, `${options.name}.outbox.db`),
    options.clock,
    options.capacity,
    () => incarnationOf(options),
    options.check,
  );
}

/**
 * Makes the directory of disk outboxes if missing and checks it takes files: E_OUTBOX_UNAVAILABLE
 * otherwise. openOutbox() does it; a command may do it first, before anything it cannot undo.
 */
export function outboxDirectory(dir: string): void {
  try {
    ensureDirectory(dir);
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new RpmlabError(
      "E_OUTBOX_UNAVAILABLE",
      `cannot use the outbox directory ${dir}: ${(error as Error).message}`,
      { field: "outbox", value: dir },
      error,
    );
  }
}

/**
 * What makes message ids unique across outboxes of the same sender (a deleted outbox file starts
 * a new incarnation, so sequence 1 again does not repeat an id the ingestion core has already
 * claimed): base-36 of the instant the outbox was created, then four hex digits drawn from the
 * sender's seeded stream. On a virtual clock two runs from the same start differ in their seed
 * (other readings), and the time alone would give them the same ids: the second run's readings
 * would be taken for repeats and stored nothing.
 */
export function incarnationOf(options: Pick<OutboxOptions, "clock" | "rng">): string {
  return `${Math.max(0, Math.floor(options.clock.now())).toString(36)}${options.rng.hex(4).toLowerCase()}`;
}

/** The message id of the entries from `first` to `last`. */
export function batchMessageId(incarnation: string, first: number, last: number): string {
  return first === last ? `${incarnation}.${first}` : `${incarnation}.${first}-${last}`;
}

export function checkCapacity(capacity: number): void {
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new RpmlabError("E_CONFIG_INVALID", `outbox capacity must be an integer >= 1`, {
      field: "capacity",
      value: capacity,
    });
  }
}

export function checkMax(max: number): void {
  if (!Number.isInteger(max) || max < 1 || max > MAX_READINGS) {
    throw new RpmlabError("E_USAGE", `a batch takes 1 to ${MAX_READINGS} items, got ${max}`, {
      field: "max",
    });
  }
}

/** The outbox in memory: the same rules, gone with the process. */
export class MemoryOutbox<T> implements Outbox<T> {
  /** Items never leave memory as text, so none is ever set aside. */
  readonly events = new TypedEvents<OutboxEvents<T>>();
  readonly setAside = 0;
  /** Entries from `head` on are held; the ones before it left (compacted now and then). */
  private entries: OutboxEntry<T>[] = [];
  private head = 0;
  private nextSeq = 1;
  private droppedCount = 0;
  private readonly incarnation: string;

  constructor(
    private readonly clock: Clock,
    readonly capacity: number,
    incarnation: string,
  ) {
    checkCapacity(capacity);
    this.incarnation = incarnation;
  }

  get size(): number {
    return this.entries.length - this.head;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  enqueue(item: T): OutboxEntry<T> {
    const entry = { seq: this.nextSeq++, queuedAt: this.clock.now(), item };
    this.entries.push(entry);
    const from = this.head;
    while (this.size > this.capacity) {
      this.head++;
      this.droppedCount++;
    }
    const dropped = this.head > from ? this.entries.slice(from, this.head) : undefined;
    this.compact();
    if (dropped !== undefined) this.events.emit("dropped", { entries: dropped });
    return entry;
  }

  take(max = MAX_READINGS, upToSeq = Number.POSITIVE_INFINITY): OutboxBatch<T> | null {
    checkMax(max);
    const entries: OutboxEntry<T>[] = [];
    for (let i = this.head; i < this.entries.length && entries.length < max; i++) {
      const entry = this.entries[i]!;
      if (entry.seq > upToSeq) break;
      entries.push(entry);
    }
    return batchOf(this.incarnation, entries);
  }

  remove(batch: OutboxBatch<T>): number {
    const from = this.head;
    while (this.head < this.entries.length && this.entries[this.head]!.seq <= batch.lastSeq) {
      this.head++;
    }
    const removed = this.head - from;
    this.compact();
    return removed;
  }

  held(): OutboxEntry<T>[] {
    return this.entries.slice(this.head);
  }

  /** Nothing to release: the entries stay readable (and are gone with the process). */
  close(): void {}

  /** Drops the departed prefix once it is most of the array (amortised O(1) per entry). */
  private compact(): void {
    if (this.head > 64 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}

/** A batch of `entries` (oldest first), or null for none. */
export function batchOf<T>(
  incarnation: string,
  entries: readonly OutboxEntry<T>[],
): OutboxBatch<T> | null {
  if (entries.length === 0) return null;
  const firstSeq = entries[0]!.seq;
  const lastSeq = entries.at(-1)!.seq;
  return { messageId: batchMessageId(incarnation, firstSeq, lastSeq), entries, firstSeq, lastSeq };
}
