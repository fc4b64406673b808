import { RpmlabError } from "../core/errors.ts";
import { redactUrlSpec } from "./redact-url.ts";
import { fromSource } from "./spec-source.ts";

/**
 * The store boundary's spec strings (DESIGN.md, "Boundaries"): `memory`, `sqlite:PATH`,
 * `postgres://…` / `postgresql://…` with an optional `?schema=NAME`.
 */
export type StoreSpec =
  | { readonly kind: "sqlite"; readonly path: ":memory:"; readonly memory: true }
  | { readonly kind: "sqlite"; readonly path: string; readonly memory: false }
  | {
      readonly kind: "postgres";
      /** Connection string without the `schema` parameter (pg would not understand it). */
      readonly url: string;
      /** Schema to create and use instead of `public`: lets tests isolate themselves. */
      readonly schema: string | undefined;
    };

/** DESIGN.md: the default store of `rpmlab serve`; tests use `memory`. */
export const DEFAULT_SERVE_STORE = "sqlite:./.rpmlab/lab.db";
export const DEFAULT_TEST_STORE = "memory";

/** Plain unquoted identifiers only, so the name can go into `search_path` without quoting. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * PostgreSQL's own schemas: a `pg_` name cannot be created (the prefix is reserved: the start
 * failed as if the server were unavailable), and information_schema exists already, so a lab
 * moved its tables into the SQL standard's catalogue views.
 */
const SYSTEM_SCHEMA = /^(pg_|information_schema$)/;

const HELP = "expected memory, sqlite:PATH, or postgres://user@host:port/db[?schema=NAME]";

/**
 * `source` names where the spec came from in errors when it is not the --store flag: a bad
 * $RPMLAB_STORE in a CI job's environment is not something the command line shows.
 */
export function parseStoreSpec(spec: string, source?: string): StoreSpec {
  return fromSource(source, () => parseTrimmed(spec, spec.trim()));
}

function parseTrimmed(spec: string, text: string): StoreSpec {
  if (text === "memory" || text === "sqlite::memory:") {
    return { kind: "sqlite", path: ":memory:", memory: true };
  }
  if (text.startsWith("sqlite:")) {
    const path = text.slice("sqlite:".length);
    if (path === "") throw invalid(spec, "sqlite: needs a file path");
    return { kind: "sqlite", path, memory: false };
  }
  if (text.startsWith("postgres://") || text.startsWith("postgresql://")) {
    return parsePostgres(spec, text);
  }
  throw invalid(spec, HELP);
}

function parsePostgres(spec: string, text: string): StoreSpec {
  let url: URL;
  try {
    url = new URL(text);
  } catch (cause) {
    // The URL parser refuses a port past 65535 as it refuses garbage: say which (as --broker does).
    const port = /^postgres(?:ql)?:\/\/[^/?]*:(\d+)(?:[/?]|$)/.exec(text)?.[1];
    if (port !== undefined && Number(port) > 65_535) {
      throw invalid(spec, `the port must be a whole number from 1 to 65535, got "${port}"`, cause);
    }
    throw invalid(spec, "not a valid URL", cause);
  }
  if (url.hostname === "" && !url.searchParams.has("host")) {
    throw invalid(spec, "the PostgreSQL URL names no host");
  }
  const schema = url.searchParams.get("schema") ?? undefined;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw invalid(spec, `schema must match ${SCHEMA_NAME.source}, got "${schema}"`);
  }
  if (schema !== undefined && SYSTEM_SCHEMA.test(schema)) {
    throw invalid(spec, `schema "${schema}" is PostgreSQL's own: name one of the lab's`);
  }
  url.searchParams.delete("schema");
  return { kind: "postgres", url: url.toString(), schema };
}

/** Query parameters a PostgreSQL URL's messages show: none of them is a secret. */
const SHOWN_PARAMETERS = ["schema", "host", "port", "sslmode"];

/**
 * The spec string with its password replaced, for messages and logs, and every query value but
 * SHOWN_PARAMETERS': pg takes a password from `?password=` as well as from the user information.
 */
export function redactStoreSpec(spec: string): string {
  return redactUrlSpec(spec, SHOWN_PARAMETERS);
}

function invalid(spec: string, why: string, cause?: unknown): RpmlabError {
  const shown = redactStoreSpec(spec);
  return new RpmlabError(
    "E_CONFIG_INVALID",
    `invalid store "${shown}": ${why}`,
    { field: "store", value: shown },
    cause,
  );
}
