import type { FastifyReply, FastifyRequest } from "fastify";
import { MESSAGES } from "../../core/drf-fields.ts";
import { FieldErrorCollector } from "../../core/field-errors.ts";
import { MS_PER_DAY, parseIso } from "../../core/time.ts";
import type { MeasurementQuery } from "../../store/types-ingest.ts";
import {
  FLAT_LIST_LIMIT,
  type ListMode,
  listMode,
  type PaginationQuery,
  paginate,
  paginationQuery,
  queryParam,
  sendList,
} from "../pagination.ts";
import { MEASUREMENT_LISTS, measurementJson } from "../schemas/measurement.ts";
import type { ApiContext } from "../types.ts";
import { PageCursors } from "./page-cursors.ts";

/**
 * The measurement queries of spec 4.4 and 8, shared by the four measurement endpoints
 * (wire-formats "Measurement queries"):
 * - filters metric__name (exact), timestamp__gte / created__gte (inclusive), timestamp__lt /
 *   created__lt (exclusive), ISO 8601 (a date alone is its midnight UTC; no offset means UTC);
 *   a value that is not such a date is a 400 keyed by its parameter;
 * - with `page`: the envelope over every match (spec 2.6), absolute next/previous;
 * - without `page` (spec 8): with no time bound at all, only the last 30 days of the clock's now
 *   (by timestamp); with both bounds of timestamp or of created at most 30 days apart, every
 *   match; otherwise (a longer or open-ended range) the first 1000 matches;
 * - order: timestamp, then id, ascending, so a page or a truncated list holds the oldest
 *   matches first, and equal timestamps (the records of one reading) page stably.
 */

export const DEFAULT_WINDOW_MS = 30 * MS_PER_DAY;

const ISO_HELP =
  "ISO 8601, e.g. 2024-10-16T04:10:00Z or 2024-10-16 (midnight UTC); without an offset, UTC; digits of a second's fraction past the microsecond are dropped.";

const ISO_EXAMPLE = { example: "2024-10-16T04:10:00Z" };

/** The querystring fields of every measurement endpoint; spread into the route's own. */
export const measurementQuery = {
  metric__name: queryParam("Only this metric (exact API name, e.g. blood_pressure)."),
  timestamp__gte: queryParam(
    `Readings taken at or after this time (inclusive). ${ISO_HELP}`,
    ISO_EXAMPLE,
  ),
  timestamp__lt: queryParam(
    `Readings taken before this time (exclusive). ${ISO_HELP}`,
    ISO_EXAMPLE,
  ),
  created__gte: queryParam(
    `Records received at or after this time (inclusive). ${ISO_HELP}`,
    ISO_EXAMPLE,
  ),
  created__lt: queryParam(
    `Records received before this time (exclusive). ${ISO_HELP}`,
    ISO_EXAMPLE,
  ),
  ...paginationQuery,
};

export interface MeasurementQueryString extends PaginationQuery {
  metric__name?: string | undefined;
  timestamp__gte?: string | undefined;
  timestamp__lt?: string | undefined;
  created__gte?: string | undefined;
  created__lt?: string | undefined;
}

export const MEASUREMENT_RULES =
  "Ordered by timestamp then id, oldest first. Without page (spec 8): with no time bound, only the last 30 days (by timestamp, from the lab clock's now); with both bounds of timestamp__ or of created__ at most 30 days apart, every match; otherwise (a longer or open-ended range) the first 1000 matches in that order, i.e. the oldest: read on with page, or from timestamp__gte = the last timestamp received (records at that timestamp repeat; their ids tell them apart). With page: the envelope {count, next, previous, results} over every match, next/previous absolute URLs; a page reached through next is read from where the previous one ended (keyset) rather than by OFFSET, with the same answer. A time value that is not ISO 8601 is a 400 keyed by its parameter.";

type Filter = Pick<
  MeasurementQuery,
  "metric" | "timestampGte" | "timestampLt" | "createdGte" | "createdLt"
>;

const BOUNDS = [
  ["timestamp__gte", "timestampGte"],
  ["timestamp__lt", "timestampLt"],
  ["created__gte", "createdGte"],
  ["created__lt", "createdLt"],
] as const;

/** The filters of a query string; 400 keyed by parameter for every time that does not parse. */
export function measurementFilterOf(query: MeasurementQueryString): Filter {
  const errors = new FieldErrorCollector();
  const filter: { -readonly [K in keyof Filter]: Filter[K] } = {};
  const metric = query.metric__name;
  if (metric !== undefined && metric !== "") filter.metric = metric;
  for (const [param, field] of BOUNDS) {
    const text = query[param];
    if (text === undefined || text.trim() === "") continue;
    const ms = parseBound(plusFromQuery(microsecondsOf(text)));
    if (ms === undefined) errors.add(param, MESSAGES.dateTime);
    else filter[field] = ms;
  }
  errors.throwIfAny();
  return filter;
}

/** Seconds' fraction: a dot or ISO 8601's decimal comma, digits past the sixth kept apart. */
const FRACTION = /([T ]\d{2}:\d{2}:\d{2})[.,](\d{1,6})\d*/;

/**
 * Fractions as Django reads them (datetime.fromisoformat, then dateparse's `[.,]\d{1,6}\d{0,6}`):
 * a comma for the dot, and digits past the microsecond dropped, not rounded. Go's RFC3339Nano
 * and Java's Instant.toString write nanoseconds (.123456789Z).
 */
function microsecondsOf(text: string): string {
  return text.replace(FRACTION, "$1.$2");
}

const UNESCAPED_PLUS =
  /^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?) (\d{2}(?::?\d{2})?)$/;

/**
 * A time bound in whole milliseconds, as records are stored. A bound between two milliseconds
 * (microseconds not a multiple of 1000) moves up to the next one: a record at a whole millisecond
 * t satisfies t >= x, and t < x, exactly when it satisfies them for x rounded up.
 */
function parseBound(text: string): number | undefined {
  const ms = parseIso(text);
  if (ms === undefined) return undefined;
  const fraction = /\.\d{3}(\d+)/.exec(text)?.[1];
  return fraction !== undefined && /[1-9]/.test(fraction) ? ms + 1 : ms;
}

/**
 * An offset's "+" arrives as a space when a client leaves it unescaped in the query string
 * ("2024-10-16T04:10:00 00:00"); read it back as "+", in each form parseIso reads escaped
 * (±hh, ±hhmm, ±hh:mm), so "+01" does not turn into a 400 for want of a %2B.
 */
function plusFromQuery(text: string): string {
  return text.trim().replace(UNESCAPED_PLUS, "$1+$2");
}

/** Spec 8 for a request without `page`: the window and the limit. */
export function flatRules(filter: Filter, now: number): { filter: Filter; limit: number } {
  const { timestampGte: tg, timestampLt: tl, createdGte: cg, createdLt: cl } = filter;
  if (tg === undefined && tl === undefined && cg === undefined && cl === undefined) {
    return { filter: { ...filter, timestampGte: now - DEFAULT_WINDOW_MS }, limit: Infinity };
  }
  const within = (gte?: number, lt?: number) =>
    gte !== undefined && lt !== undefined && lt - gte <= DEFAULT_WINDOW_MS;
  return { filter, limit: within(tg, tl) || within(cg, cl) ? Infinity : FLAT_LIST_LIMIT };
}

/**
 * The page and the filters of a query. A DRF list view finds its device (get_queryset, 404)
 * before it filters and pages, so a query it cannot read is a 400 only for a device that exists:
 * on that error path alone `whenEmpty` looks the target up, as the patient routes always do.
 */
async function parsedQuery(
  query: MeasurementQueryString,
  whenEmpty: () => Promise<unknown>,
): Promise<{ mode: ListMode; filter: Filter }> {
  try {
    return { mode: listMode(query), filter: measurementFilterOf(query) };
  } catch (error) {
    await whenEmpty();
    throw error;
  }
}

/** Whose measurements: one device, or every device of a patient (exact external_id). */
export type MeasurementTarget = { deviceId: string } | { patientExternalId: string };

/**
 * Answers the measurement GETs of one route plugin; keeps its page cursors (page-cursors.ts).
 */
export class MeasurementPages {
  private readonly cursors = new PageCursors();

  constructor(private readonly ctx: ApiContext) {}

  /**
   * Answers a measurement GET for `target`. `whenEmpty` runs only when nothing matched (or the
   * query is refused), to tell "no readings" from "no such device" (404): readings match the
   * account and the target, so finding any proves the target is the account's, and the hot path
   * saves a lookup.
   */
  async send(
    request: FastifyRequest,
    reply: FastifyReply,
    accountId: string,
    target: MeasurementTarget,
    query: MeasurementQueryString,
    whenEmpty: () => Promise<unknown> = async () => undefined,
  ): Promise<FastifyReply> {
    const { ctx } = this;
    const { mode, filter } = await parsedQuery(query, whenEmpty);
    const base = { accountId, ...target, ...filter } as MeasurementQuery;
    if (mode.kind === "flat") {
      const rules = flatRules(filter, ctx.clock.now());
      const limit = Number.isFinite(rules.limit) ? rules.limit : Number.MAX_SAFE_INTEGER;
      const { rows } = await ctx.store.measurements.records({ ...base, ...rules.filter, limit });
      if (rows.length === 0) await whenEmpty();
      return sendList(reply, rows.map(measurementJson), MEASUREMENT_LISTS);
    }
    const key = JSON.stringify([accountId, target, filter]);
    const body = await paginate(
      request,
      mode,
      async (options) => {
        const result = await this.cursors.page(key, options, (window) =>
          ctx.store.measurements.records({ ...base, ...window }),
        );
        if (result.total === 0) await whenEmpty();
        return result;
      },
      measurementJson,
      ctx.config.baseUrl,
    );
    return sendList(reply, body, MEASUREMENT_LISTS);
  }
}
