import {
  type Compilable,
  CompiledQuery,
  type Kysely,
  type RawBuilder,
  type SelectQueryBuilder,
  type SqliteDatabase,
  sql,
} from "kysely";
import type { Clock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import type { Dialect } from "./dialect.ts";
import { readNum } from "./dialect.ts";
import { listSize, paramList, type QueryTemplates } from "./query-templates.ts";
import type { Database } from "./schema.ts";
import type { ListOptions } from "./types.ts";

/**
 * Public ids (accounts, keys, devices, webhooks, replacements) are UUIDs drawn from the lab's
 * seeded Rng, so a scenario on a fresh store names its devices the same way every run. The
 * stream is forked per store "epoch", a counter bumped in the database at each open: a
 * persistent store reopened with the same seed draws a new stream instead of repeating ids.
 * Webhook deliveries draw from a stream of their own: how many there are by the time an order
 * is placed depends on when the dispatcher ran, and an order's id seeds its shipment
 * (fulfilment/shipment-plan.ts), so sharing one stream let that timing reach the shipment.
 */
export class StoreIds {
  private stream: Rng | undefined;
  private deliveries: Rng | undefined;

  constructor(private readonly rng: Rng) {}

  get ready(): boolean {
    return this.stream !== undefined;
  }

  start(epoch: number): void {
    this.stream = this.rng.fork(`store-ids/${epoch}`);
    this.deliveries = this.rng.fork(`store-ids/${epoch}/deliveries`);
  }

  uuid(): string {
    return this.started(this.stream).uuid();
  }

  /** A webhook delivery's time-ordered UUID (Rng.uuidV7): they are written in bulk as time goes. */
  deliveryId(ms: number): string {
    return this.started(this.deliveries).uuidV7(ms);
  }

  private started(stream: Rng | undefined): Rng {
    if (stream === undefined) {
      throw new RpmlabError("E_STORE_UNAVAILABLE", "the store is not migrated: call migrate()");
    }
    return stream;
  }
}

/** What every repository works with: a connection or the current transaction. */
export interface Ctx {
  readonly db: Kysely<Database>;
  readonly d: Dialect;
  readonly clock: Clock;
  readonly ids: StoreIds;
  readonly inTx: boolean;
  /**
   * SQLite only: the connection under Kysely (statements cached by SQL text), for the ingestion
   * hot path, where Kysely's per-query promises cost as much as SQLite itself. Use it only
   * inside a transaction (`inTx`): Kysely then holds its single connection, so no other query
   * can interleave with the synchronous calls.
   */
  readonly sqlite?: SqliteDatabase;
  /** The store's queries built once per shape (query-templates.ts), shared by its transactions. */
  readonly templates: QueryTemplates;
  /** How `search` folds case here (searchFold), set when the store migrates; shared. */
  readonly fold: SearchFold;
}

/**
 * Runs the query of `shape` (QueryTemplates) with `values`: inside a transaction on SQLite
 * straight on the connection, as the ingestion hot path does (Ctx.sqlite), else through Kysely.
 * For the queries every gateway check-in runs: building a Kysely query per call (its operation
 * tree walked, frozen and compiled to text) cost about as much CPU as SQLite's own work on them
 * (test/bench/scenario-cohort.ts profiled). `list` holds the values of its paramList placeholders.
 */
export async function templated<R>(
  ctx: Ctx,
  shape: string,
  build: () => Compilable<R>,
  values: Readonly<Record<string, unknown>>,
  list?: readonly unknown[],
): Promise<R[]> {
  const { sql, parameters } = ctx.templates.bind(shape, build, values, list);
  if (ctx.sqlite !== undefined && ctx.inTx) {
    const statement = ctx.sqlite.prepare(sql);
    // As Kysely's SQLite driver runs it: rows from a statement that returns them.
    if (statement.reader) return statement.all(parameters) as R[];
    statement.run(parameters);
    return [];
  }
  return (await ctx.db.executeQuery<R>(CompiledQuery.raw(sql, parameters))).rows;
}

/**
 * `templated` with an `in (…)` list of any length: in CHUNKs, each in a template of listSize
 * placeholders; `build` places the list's placeholders, `values` are the query's others.
 * The rows of every chunk.
 */
export async function templatedIn<R, T>(
  ctx: Ctx,
  shape: string,
  items: readonly T[],
  build: (list: T[]) => Compilable<R>,
  values: Readonly<Record<string, unknown>> = {},
): Promise<R[]> {
  if (items.length === 0) return [];
  if (items.length <= CHUNK) return templatedChunk(ctx, shape, items, build, values);
  const rows: R[] = [];
  for (const part of chunked(items)) {
    for (const row of await templatedChunk(ctx, shape, part, build, values)) rows.push(row);
  }
  return rows;
}

function templatedChunk<R, T>(
  ctx: Ctx,
  shape: string,
  part: readonly T[],
  build: (list: T[]) => Compilable<R>,
  values: Readonly<Record<string, unknown>>,
): Promise<R[]> {
  const size = listSize(part.length);
  return templated(ctx, `${shape} ${size}`, () => build(paramList<T>(size)), values, part);
}

/** Runs `fn` atomically: in the caller's transaction when there is one, else in a new one. */
export function atomic<T>(ctx: Ctx, fn: (tx: Ctx) => Promise<T>): Promise<T> {
  if (ctx.inTx) return fn(ctx);
  return ctx.db.transaction().execute((trx) => fn({ ...ctx, db: trx, inTx: true }));
}

/** Applies limit/offset; SQLite needs a LIMIT for an OFFSET, -1 meaning "no limit". */
export function paged<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  page: ListOptions | undefined,
): SelectQueryBuilder<DB, TB, O> {
  let out = qb;
  const limit = page?.limit;
  const offset = page?.offset ?? 0;
  if (limit !== undefined) out = out.limit(checkedInt("limit", limit));
  else if (offset > 0) out = out.limit(Number.MAX_SAFE_INTEGER);
  if (offset > 0) out = out.offset(checkedInt("offset", offset));
  return out;
}

/**
 * Values per `in (…)` list or multi-row insert: far below SQLite's 32766 and PostgreSQL's 65535
 * bound parameters per statement.
 */
export const CHUNK = 500;

/** `items` in slices of at most `size`. */
export function chunked<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size)
    out.push(items.slice(start, start + size));
  return out;
}

/** count(*) of a filtered query (without its ordering or paging). */
export async function countOf<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
): Promise<number> {
  const row = await qb
    .clearSelect()
    .clearOrderBy()
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirst();
  return readNum((row as { n?: unknown } | undefined)?.n ?? 0);
}

export function checkedInt(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RpmlabError("E_STORE_INVALID", `${field} must be a non-negative integer`, {
      field,
      value,
    });
  }
  return value;
}

/**
 * PostgreSQL only: the collation whose lower() folds `search` text, when the database's own does
 * not. A database created with LC_CTYPE C (`initdb --locale=C`, a common choice for shared
 * servers) lowers ASCII only: searching "zoë" missed "ZOË" there, while SQLite (JavaScript's
 * folding, open.ts) and en_US or C.UTF-8 databases found it.
 */
export interface SearchFold {
  collation?: string;
}

/** Collations that fold Unicode case, in order of preference: ICU's root, glibc's C.UTF-8. */
const FOLDING_COLLATIONS = ["und-x-icu", "C.utf8", "C.UTF-8"];

/**
 * Whether lower() folds beyond ASCII (with `collation`, or the database's own). Final sigma
 * taken as σ, as `folded` takes it: ICU's lower() writes a word's last Σ as ς, and the check
 * refused every ICU collation for it — on a server without glibc's C.UTF-8 (Alpine's musl)
 * nothing was chosen, and a database of ctype C searched ASCII case only.
 */
function foldsUnicode(collation?: string) {
  const text = collation === undefined ? sql`'ÀÉΣ'` : sql`'ÀÉΣ' collate ${sql.id(collation)}`;
  return sql<{ folds: boolean }>`select replace(lower(${text}), 'ς', 'σ') = 'àéσ' as folds`;
}

/** Picks the collation `search` folds with on PostgreSQL (SearchFold); none where not needed. */
export async function chooseSearchFold(ctx: Ctx): Promise<void> {
  if (ctx.d.kind !== "postgres") return;
  const folds = async (collation?: string) => {
    try {
      const { rows } = await foldsUnicode(collation).execute(ctx.db);
      return rows[0]?.folds === true;
    } catch {
      return false; // no such collation here, or a database encoding without these letters
    }
  };
  if (await folds()) return;
  for (const collation of FOLDING_COLLATIONS) {
    if (await folds(collation)) {
      ctx.fold.collation = collation;
      return;
    }
  }
}

/**
 * Text folded for `search`, the same on both dialects: lower(), then final sigma as σ. İ is i
 * first: ICU's lower() maps it to i + U+0307 (as JavaScript's does, open.ts), glibc's to i —
 * with the database's own lower() too, which is ICU's on a database created with ICU.
 */
const folded = (fold: SearchFold, value: unknown) =>
  fold.collation === undefined
    ? sql`replace(lower(replace(${value}, 'İ', 'i')), 'ς', 'σ')`
    : sql`replace(lower(replace(${value}, 'İ', 'i') collate ${sql.id(fold.collation)}), 'ς', 'σ')`;

/**
 * `folded(column) LIKE folded('%text%')`, the wildcard characters of `text` escaped: `search`
 * (spec 4.5) ignoring case, with one fold for both sides, in the store (a pattern lowered in
 * JavaScript missed stored text PostgreSQL folds otherwise). PostgreSQL's lower() maps every Σ
 * to σ, so a name typed as a Greek keyboard writes it, "Νικος", missed "ΝΙΚΟΣ" there, while
 * SQLite's (JavaScript's, open.ts) found it: ς is taken as σ on both.
 */
export function containsIgnoringCase(
  ctx: Ctx,
  column: string | RawBuilder<unknown>,
  text: string,
): RawBuilder<boolean> {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const value = typeof column === "string" ? sql.ref(column) : column;
  return sql<boolean>`${folded(ctx.fold, value)} like ${folded(ctx.fold, pattern)} escape '\\'`;
}

/**
 * `value = text` ignoring case, with `search`'s one fold for both sides (containsIgnoringCase):
 * upper() folds ASCII only on SQLite but every letter on PostgreSQL, so a dead letter's
 * `source` "éa" found the topic of "éA" there and not here (and "ıd" not even its own topic,
 * whose upper() SQLite left "ıD" while JavaScript wrote "ID").
 */
export function equalsIgnoringCase(
  ctx: Ctx,
  value: RawBuilder<unknown>,
  text: string,
): RawBuilder<boolean> {
  return sql<boolean>`${folded(ctx.fold, value)} = ${folded(ctx.fold, text)}`;
}

/**
 * Text from outside a store can keep on every dialect: PostgreSQL text refuses U+0000 (SQLite
 * keeps it). A dead letter's topic (a broker may pass on what [MQTT-4.7.3-2] forbids) or reason
 * (quoting what a device sent), a webhook answer's body (any bytes the client's endpoint sent):
 * each U+0000 is written as the six characters \u0000, on both dialects alike. Refusing instead
 * would leave a dead letter nowhere but the error log (ingestor.ts deadLetterAlone), and a
 * webhook attempt unrecorded: its delivery was sent again and again.
 */
export function keepableText(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\\u0000") : text;
}

export function notFound(what: string, details: Record<string, unknown>): RpmlabError {
  return new RpmlabError("E_STORE_NOT_FOUND", `${what} not found`, details);
}

export function conflict(message: string, details: Record<string, unknown>): RpmlabError {
  return new RpmlabError("E_STORE_CONFLICT", message, details);
}

export function invalid(message: string, details: Record<string, unknown>): RpmlabError {
  return new RpmlabError("E_STORE_INVALID", message, details);
}
