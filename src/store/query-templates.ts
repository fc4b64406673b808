import { type Compilable, CompiledQuery, type QueryResult } from "kysely";
import { RpmlabError } from "../core/errors.ts";

/** Where a named value goes in a query built once per shape (see QueryTemplates). */
class Param {
  constructor(readonly name: string) {}
}

/** Where the `index`th value of a call's `in (…)` list goes (see paramList). */
class ListParam {
  constructor(readonly index: number) {}
}

/** A placeholder for the value `name` in a template's build function; typed as the value. */
export function param<T>(name: string): T {
  return new Param(name) as unknown as T;
}

/**
 * Placeholders for an `in (…)` list of `size` values, taken by position from the list a call
 * passes; a list shorter than `size` fills the rest with its last value (a repeat changes
 * nothing in `in`). The call's list is used as it is: no object per call with a key per value.
 */
export function paramList<T>(size: number): T[] {
  return Array.from({ length: size }, (_, i) => new ListParam(i) as unknown as T);
}

/** A row of placeholders named after `row`'s columns: a one-row insert's template. */
export function paramRow<R extends object>(row: R): R {
  return Object.fromEntries(Object.keys(row).map((column) => [column, param(column)])) as R;
}

/**
 * The template size of an `in (…)` list of `count` values: rounded up to a power of two, so
 * lists of 1 to 500 values take 10 shapes rather than 500. `count` must not be 0.
 */
export function listSize(count: number): number {
  return 2 ** Math.ceil(Math.log2(count));
}

interface Template {
  readonly sql: string;
  /** The value of each bound parameter, in order: by name, or by position in the call's list. */
  readonly names: readonly (string | number)[];
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
    list?: readonly unknown[],
  ): Promise<R[]> {
    const { sql, parameters } = this.bind(shape, build, values, list);
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
    list: readonly unknown[] = [],
  ): { readonly sql: string; readonly parameters: unknown[] } {
    let template = this.templates.get(shape);
    if (template === undefined) {
      template = compileTemplate(shape, build());
      this.templates.set(shape, template);
    }
    const last = list.length - 1;
    const parameters = template.names.map((name) =>
      typeof name === "number" ? list[name < last ? name : last] : values[name],
    );
    return { sql: template.sql, parameters };
  }
}

function compileTemplate(shape: string, query: Compilable): Template {
  const { sql, parameters } = query.compile();
  const names = parameters.map((p) => {
    if (p instanceof ListParam) return p.index;
    // A literal bound in a template would be replayed for every later call of the shape.
    if (!(p instanceof Param)) {
      throw new RpmlabError("E_USAGE", `query template ${shape} binds a value that is no param()`);
    }
    return p.name;
  });
  return { sql, names };
}
