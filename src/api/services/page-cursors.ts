import type { ListOptions, ListResult } from "../../store/types.ts";

/** What a cursor needs of a record: its place in the (timestamp, id) order. */
interface Keyed {
  readonly timestamp: number;
  readonly id: number;
}

/** Where a page starts: right after this (timestamp, id), while the query matched `total`. */
interface Cursor {
  readonly total: number;
  readonly after: { readonly timestamp: number; readonly id: number };
}

/** The part of a measurement query that picks the page. */
export interface PageWindow {
  readonly limit: number;
  readonly offset?: number;
  readonly after?: Cursor["after"];
  readonly count?: boolean;
}

/** Cursors kept per app: a few hundred bytes each. */
const CAPACITY = 10_000;

/**
 * Keyset pagination behind DRF's page numbers, for clients that follow `next` (spec 8 rule 1:
 * "Follow next until it is null"). With OFFSET, page N costs a walk over (N-1) × page_size index
 * entries, so reading a device's history page by page is quadratic. Serving a full page
 * remembers where the next one starts; asked for that page, the store seeks there (the
 * (account, device or patient, timestamp, id) indexes are keyset-friendly) instead of walking.
 *
 * Why a remembered start stays right: a record's timestamp and id never change, and a device's
 * records are only ever added to (ingestion, orphans attached at activation). A patient's move
 * as a whole: a rename takes them to the new id, a DELETE off the patient. So a remembered
 * start is still page N's when its own record is still in the set (one seek, stillMatched) and
 * the total is unchanged (the envelope needs it anyway); otherwise the page is read with OFFSET.
 * Answers are the same as without cursors.
 */
export class PageCursors {
  private readonly cursors = new Map<string, Cursor>();

  /**
   * One page of `query` (offset paging with the total), through a remembered cursor when there
   * is one. `key` identifies the query's target and filters.
   */
  async page<R extends Keyed>(
    key: string,
    options: ListOptions,
    run: (window: PageWindow) => Promise<ListResult<R>>,
  ): Promise<ListResult<R>> {
    const limit = options.limit ?? 0;
    const offset = options.offset ?? 0;
    const count = options.count === true;
    const at = `${key}\u0000${limit}\u0000${offset}`;
    const cursor = count && offset > 0 ? this.take(at) : undefined;
    if (cursor !== undefined && (await stillMatched(cursor, run))) {
      const result = await run({ limit, after: cursor.after, count: true });
      if (result.total === cursor.total) return this.remember(key, limit, offset, result);
    }
    const result = await run({ limit, offset, ...(count ? { count: true } : {}) });
    return this.remember(key, limit, offset, result);
  }

  /** A full page with more after it: where the next page starts. */
  private remember<R extends Keyed>(
    key: string,
    limit: number,
    offset: number,
    result: ListResult<R>,
  ): ListResult<R> {
    const last = result.rows[result.rows.length - 1];
    const total = result.total;
    if (last !== undefined && total !== undefined && result.rows.length === limit) {
      if (offset + limit < total) {
        const at = `${key}\u0000${limit}\u0000${offset + limit}`;
        this.cursors.delete(at);
        if (this.cursors.size >= CAPACITY) this.cursors.delete(this.cursors.keys().next().value!);
        this.cursors.set(at, { total, after: { timestamp: last.timestamp, id: last.id } });
      }
    }
    return result;
  }

  /** The cursor of a page, refreshed as the most recently used. */
  private take(at: string): Cursor | undefined {
    const cursor = this.cursors.get(at);
    if (cursor !== undefined) {
      this.cursors.delete(at);
      this.cursors.set(at, cursor);
    }
    return cursor;
  }
}

/**
 * Whether the record a cursor starts after is still one the query matches: the first record
 * after (timestamp, id − 1) is that record exactly when it is (ids are integers). Two patients
 * renamed into each other's ids keep their counts and not their records.
 */
async function stillMatched<R extends Keyed>(
  cursor: Cursor,
  run: (window: PageWindow) => Promise<ListResult<R>>,
): Promise<boolean> {
  const { timestamp, id } = cursor.after;
  const { rows } = await run({ limit: 1, after: { timestamp, id: id - 1 } });
  return rows[0]?.id === id;
}
