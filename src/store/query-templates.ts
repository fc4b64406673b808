import { type Compilable, CompiledQuery, type QueryResult } from "kysely";
import { RpmlabError } from "../core/errors.ts";

/** Where a named value goes in a query built once per shape (see QueryTemplates). */
class Param {
  constructor(readonly name: string) {}
}

/** A placeholder for the value `name` in a template's build function; typed as the value. */
export function param<T>(name: string): T {
  return new Param(name) as unknown as T;
}

/** Placeholders for an `in (…)` list of `count` values, named `${prefix}0`, `${prefix}1`, … */
export function paramList<T>(prefix: string, count: number): T[] {
  return Array.from({ length: count }, (_, i) => param<T>(`${prefix}${i}`));
}

/** A row of placeholders named after `row`'s columns: a one-row insert's template. */
export function paramRow<R extends object>(row: R): R {
  return Object.fromEntries(Object.keys(row).map((column) => [column, param(column)])) as R;
}

/**
 * An `in (…)` list of any length as one of a few template shapes: its length rounded up to a
 * power of two, the last value repeated to fill it (a repeat changes nothing in `in`), so lists
 * of 1 to 500 values take 10 shapes rather than 500. `size` goes in the shape key and to
 * paramList; `values` are the call's, by name. `items` must not be empty.
 */
export function inList(
  prefix: string,
  items: readonly unknown[],
): { readonly size: number; readonly values: Record<string, unknown> } {
  const size = 2 ** Math.ceil(Math.log2(items.length));
  const last = items[items.length - 1];
  const values: Record<string, unknown> = {};
  for (let i = 0; i < size; i++) values[`${prefix}${i}`] = i < items.length ? items[i] : last;
  return { size, values };
}

interface Template {
  readonly sql: string;
  /** The value of each bound parameter, in order, by name. */
  readonly names: readonly string[];
}

/**
 * Queries whose SQL text depends only on their shape (which filters are present, which order),
 * built with Kysely once per shape and then run with each call's values. Building a query
 * walks and freezes Kysely's operation tree, then compiles it to text: for a measurement page
 * (its count and its rows) about 25 µs and a few hundred short-lived objects per request, on
 * the API's busiest path. A shape is built with `param(name)` where each value goes; Kysely
 * binds those as parameters, so the compiled SQL says, in order, which named value each
 * placeholder takes. The text is the dialect's own (`?` or `$n`), and SQLite's prepared
 * statements are kept by that text (sqlite-statements.ts).
 */
export class QueryTemplates {
  private readonly templates = new Map<string, Template>();

  /**
   * Runs the query of `shape` with `values`; `build` makes that query (with `param` for every
   * value) the first time the shape is seen. One shape key must always build the same query.
   */
  async run<R>(
    db: { executeQuery<O>(query: CompiledQuery<O>): Promise<QueryResult<O>> },
    shape: string,
    build: () => Compilable<R>,
    values: Readonly<Record<string, unknown>>,
  ): Promise<R[]> {
    const { sql, parameters } = this.bind(shape, build, values);
    return (await db.executeQuery<R>(CompiledQuery.raw(sql, parameters))).rows;
  }

  /**
   * The SQL text of `shape` and `values` in its placeholders' order, for a caller that runs it
   * on the connection itself (SQLite inside a transaction, Ctx.sqlite). The text is the same
   * string at every call: a Map keyed by SQL text (sqlite-statements.ts) hashes it once, where
   * Kysely's text, concatenated anew per query, is flattened and hashed at every lookup.
   */
  bind<R>(
    shape: string,
    build: () => Compilable<R>,
    values: Readonly<Record<string, unknown>>,
  ): { readonly sql: string; readonly parameters: unknown[] } {
    let template = this.templates.get(shape);
    if (template === undefined) {
      template = compileTemplate(shape, build());
      this.templates.set(shape, template);
    }
    return { sql: template.sql, parameters: template.names.map((name) => values[name]) };
  }
}

function compileTemplate(shape: string, query: Compilable): Template {
  const { sql, parameters } = query.compile();
  const names = parameters.map((p) => {
    // A literal bound in a template would be replayed for every later call of the shape.
    if (!(p instanceof Param)) {
      throw new RpmlabError("E_USAGE", `query template ${shape} binds a value that is no param()`);
    }
    return p.name;
  });
  return { sql, names };
}
