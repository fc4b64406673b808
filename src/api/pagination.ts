import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { MESSAGES } from "../core/drf-fields.ts";
import type { ListOptions, ListResult } from "../store/types.ts";
import { apiError, DRF } from "./errors.ts";
import type { JsonSchema } from "./json-schema.ts";
import { absoluteUrl } from "./urls.ts";

/**
 * Pagination of every list endpoint (spec 2.6, 8; DRF's PageNumberPagination, as the service):
 * - without `page`: a flat array, truncated at FLAT_LIST_LIMIT (spec 8 rule 1 and table);
 *   hwi-patients is always paginated (spec 4.1): pass `alwaysPaginated`;
 * - with `page`: `{count, next, previous, results}`; next/previous are absolute URLs of the same
 *   request with `page` replaced, other parameters kept (DRF build_absolute_uri);
 * - `page` is a positive integer or `last` (DRF's last_page_strings); anything else is a 400
 *   keyed `page`; a page past the end is DRF's 404 `{"detail": "Invalid page."}` (page 1 of an
 *   empty list is an empty envelope, as Django's Paginator allows);
 * - `page_size` defaults to 100 and is clamped to 1000; a value that is not a positive integer
 *   falls back to the default, as DRF's get_page_size does; without `page` it is ignored.
 * Deviation from DRF: `previous` of page 2 keeps `page=1` (DRF drops `page`) because here a
 *   request without `page` answers a flat array, which would end the walk.
 *
 * Measurement endpoints (spec 8: unpaginated requests with no time range return the last 30
 * days) read `mode.kind === "flat"` in their fetch function and narrow the time range there;
 * the flat limit and the envelope stay here.
 */

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;
export const FLAT_LIST_LIMIT = 1000;

export type ListMode =
  | { readonly kind: "flat"; readonly limit: number }
  | { readonly kind: "page"; readonly page: number | "last"; readonly pageSize: number };

export interface Envelope<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** Django's QueryDict.get: the last of repeated parameters. */
export function lastValue(value: unknown): unknown {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

export interface QueryParamOptions {
  readonly maxLength?: number;
  /**
   * A value the route takes, documented as the parameter's example, for a parameter whose
   * values the route checks (a date-time, a boolean, an ordering): the explorer and generated
   * clients otherwise fill in a bare string ("string") and get a 400.
   */
  readonly example?: string;
}

/** A query parameter in a route's querystring schema (repeated parameters: the last one). */
export function queryParam(description: string, opts: QueryParamOptions = {}) {
  return requiredQueryParam(description, opts).optional();
}

/** A query parameter the operation cannot go without (documented `required: true`). */
export function requiredQueryParam(description: string, opts: QueryParamOptions = {}) {
  const max = opts.maxLength;
  // Only a missing parameter is not a string here (lastValue took the last of a repeated one).
  const given = z.string({ error: MESSAGES.required });
  const text = max === undefined ? given : given.max(max, { error: MESSAGES.maxLength(max) });
  const documented = opts.example === undefined ? text : text.meta({ examples: [opts.example] });
  return z.preprocess(lastValue, documented).describe(description);
}

/**
 * The longest `search` term (hwi-devices, asr/supply-requests): longer than any field it searches
 * (the longest, notify_emails, holds 1000), so it could match nothing; and SQLite refuses a LIKE
 * pattern over 50,000 bytes (SQLITE_MAX_LIKE_PATTERN_LENGTH), which made a longer term a 500.
 */
export const MAX_SEARCH_LENGTH = 1000;

/** A `search` parameter: at most MAX_SEARCH_LENGTH characters, else 400 keyed `search`. */
export function searchParam(description: string) {
  return queryParam(`${description} At most ${MAX_SEARCH_LENGTH} characters.`, {
    maxLength: MAX_SEARCH_LENGTH,
  });
}

/** The querystring fields of every list route; spread into the route's own. */
export const paginationQuery = {
  page: queryParam(
    "Page number (1-based) or `last`. With it the answer is the envelope {count, next, previous, results}; without it a flat array of at most 1000 items (hwi-patients: always the envelope). A page past the end is 404 Invalid page.",
    { example: "1" },
  ),
  page_size: queryParam(
    "Items per page, default 100, at most 1000 (larger values are clamped; values that are not positive integers mean the default).",
    { example: "100" },
  ),
};

export interface PaginationQuery {
  page?: string | undefined;
  page_size?: string | undefined;
}

export function listMode(
  query: PaginationQuery,
  opts: { alwaysPaginated?: boolean } = {},
): ListMode {
  const pageSize = parsePageSize(query.page_size);
  if (query.page === undefined) {
    return opts.alwaysPaginated === true
      ? { kind: "page", page: 1, pageSize }
      : { kind: "flat", limit: FLAT_LIST_LIMIT };
  }
  const text = query.page.trim();
  if (text === "" || text === "last")
    return { kind: "page", page: text === "" ? 1 : "last", pageSize };
  if (!/^[+-]?\d+$/.test(text)) throw apiError.field("page", "A valid integer is required.");
  const page = Number(text);
  if (page < 1) throw apiError.field("page", "Ensure this value is greater than or equal to 1.");
  return { kind: "page", page, pageSize };
}

function parsePageSize(text: string | undefined): number {
  if (text === undefined || !/^\s*\+?\d+\s*$/.test(text)) return DEFAULT_PAGE_SIZE;
  const size = Number(text);
  return size >= 1 ? Math.min(size, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
}

/** Fetches one page (with the total) or the flat list, and renders it. */
export async function paginate<Row, Item>(
  request: FastifyRequest,
  mode: ListMode,
  fetch: (options: ListOptions) => Promise<ListResult<Row>>,
  render: (row: Row) => Item,
  baseUrl?: string,
): Promise<Item[] | Envelope<Item>> {
  if (mode.kind === "flat") return (await fetch({ limit: mode.limit })).rows.map(render);
  const size = mode.pageSize;
  let page = mode.page;
  if (page === "last") {
    const { total = 0 } = await fetch({ limit: 0, count: true });
    page = Math.max(1, Math.ceil(total / size));
  }
  const offset = (page - 1) * size;
  if (!Number.isSafeInteger(offset)) throw apiError.notFound(DRF.invalidPage);
  const { rows, total = 0 } = await fetch({ limit: size, offset, count: true });
  if (rows.length === 0 && page > 1) throw apiError.notFound(DRF.invalidPage);
  const lastPage = Math.max(1, Math.ceil(total / size));
  const url = absoluteUrl(request, baseUrl);
  return {
    count: total,
    next: page < lastPage ? withPage(url, page + 1) : null,
    previous: page > 1 ? withPage(url, page - 1) : null,
    results: rows.map(render),
  };
}

function withPage(url: URL, page: number): string {
  const out = new URL(url);
  out.searchParams.set("page", String(page));
  return out.toString();
}

/** JSON Schemas of a list of `item`: the flat array, the envelope, and both for the docs. */
export function listSchemas(item: JsonSchema) {
  const flat: JsonSchema = { type: "array", items: item };
  const envelope: JsonSchema = {
    type: "object",
    properties: {
      count: { type: "integer" },
      next: { type: ["string", "null"] },
      previous: { type: ["string", "null"] },
      results: { type: "array", items: item },
    },
    required: ["count", "next", "previous", "results"],
  };
  const either: JsonSchema = {
    description: "A flat array without `page`; the envelope with it.",
    oneOf: [flat, envelope],
  };
  return { flat, envelope, either };
}

/**
 * Sends a list whose route declares `either`: serializes with the compiled schema of the shape
 * at hand, so fast-json-stringify never has to pick a oneOf branch per reply.
 */
export function sendList<Item>(
  reply: FastifyReply,
  body: Item[] | Envelope<Item>,
  schemas: { flat: JsonSchema; envelope: JsonSchema },
): FastifyReply {
  const schema = Array.isArray(body) ? schemas.flat : schemas.envelope;
  return reply
    .type("application/json; charset=utf-8")
    .serializer(reply.compileSerializationSchema(schema, "200"))
    .send(body);
}
