import { RpmlabError } from "../core/errors.ts";
import type { ListOptions, ListResult } from "../store/types.ts";
import type { CliIo } from "./io.ts";

/** Help and default of the --limit option of the list commands. */
export const LIST_LIMIT_HELP = "at most this many";
export const LIST_LIMIT_DEFAULT = "50";

/** A list command's --limit: a whole number from 1 to 1000, as the admin API's page sizes. */
export function listLimit(text: string): number {
  // Digits only: Number() would also take 1e3, 0x10 and " 5 ".
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= 1000)) {
    // A bad number is E_CONFIG_INVALID naming the flag, as every number option (README "Commands").
    throw new RpmlabError("E_CONFIG_INVALID", `--limit must be 1 to 1000, got "${text}"`, {
      field: "limit",
    });
  }
  return limit;
}

/** Help of the --page option of the list commands that page. */
export const LIST_PAGE_HELP = "page N of --limit each, newest first (default 1)";

/** A list command's --page: a whole number from 1 (the first page, the default). */
export function listPage(text: string | undefined): number {
  if (text === undefined) return 1;
  // Digits only, as --limit; past 2^53 − 1 a number no longer counts pages one by one.
  const page = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(page >= 1 && page <= Number.MAX_SAFE_INTEGER)) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--page must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, got "${text}"`,
      { field: "page" },
    );
  }
  return page;
}

/**
 * What a page of a longer list holds, for stderr (stdout stays the table or the JSON): nothing
 * when the page is the whole list, else `deliveries 1–50 of 1234, newest first: --page 2 for
 * the next`, so a list cut at --limit never reads as the whole of it.
 */
export function pageNote(
  what: string,
  page: { readonly number: number; readonly limit: number; readonly shown: number },
  total: number,
): string | null {
  if (page.number === 1 && page.shown >= total) return null;
  const from = (page.number - 1) * page.limit + 1;
  const to = from + page.shown - 1;
  const next = to < total ? `: --page ${page.number + 1} for the next` : "";
  return `${what} ${from}–${to} of ${total}, newest first${next}`;
}

/** The page a list command shows: the `number`th run of `limit` rows, newest first. */
export interface ListPage {
  readonly number: number;
  readonly limit: number;
}

/** --limit and --page of a list command, checked (before its store is opened). */
export function listPageOf(flags: { readonly limit: string; readonly page?: string }): ListPage {
  return { limit: listLimit(flags.limit), number: listPage(flags.page) };
}

/** The store's query for a page, with the total the note and the past-the-end error need. */
export function pageQuery(page: ListPage): ListOptions {
  // Far past any list, page × limit can pass the integers a store takes: the largest one still
  // reads no rows, so such a page is past the last as any other.
  const offset = Math.min((page.number - 1) * page.limit, Number.MAX_SAFE_INTEGER);
  return { limit: page.limit, offset, count: true };
}

/** How a list names one of its rows and several (`1 delivery`, `1234 deliveries`). */
export interface ListNoun {
  readonly one: string;
  readonly many: string;
}

/**
 * Prints a page of a list command: its rows on stdout (the table or the JSON), and on stderr
 * the pageNote when it is not the whole list. A page past the last is E_USAGE naming --page, as
 * the admin API's page past the end is its 404 "Invalid page" (README "rpmlab webhooks").
 */
export function printPage<T>(
  io: CliIo,
  noun: ListNoun,
  page: ListPage,
  result: ListResult<T>,
  render: (rows: T[]) => string,
): void {
  const { rows, total = rows.length } = result;
  if (rows.length === 0 && page.number > 1) {
    const pages = Math.max(1, Math.ceil(total / page.limit));
    throw new RpmlabError(
      "E_USAGE",
      `--page ${page.number} is past the last page: ${total} ${total === 1 ? noun.one : noun.many}, ${pages} page${pages === 1 ? "" : "s"} of ${page.limit}`,
      { field: "page" },
    );
  }
  io.out(render(rows));
  const note = pageNote(noun.many, { ...page, shown: rows.length }, total);
  if (note !== null) io.err(note);
}
