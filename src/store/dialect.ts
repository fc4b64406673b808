import { type ColumnDataType, type RawBuilder, sql } from "kysely";
import { RpmlabError } from "../core/errors.ts";

/**
 * Everything SQLite and PostgreSQL do differently, in one place. The queries themselves are
 * written once (Kysely); only column types, value encodings and error codes differ.
 */
export type DialectKind = "sqlite" | "postgres";

export type DbErrorKind = "unique" | "foreign_key" | "invalid" | "unavailable" | "other";

export interface Dialect {
  readonly kind: DialectKind;
  /** Epoch ms: SQLite integers are 64-bit already; PostgreSQL needs bigint. */
  readonly ms: ColumnDataType;
  readonly bool: ColumnDataType;
  readonly json: ColumnDataType;
  readonly bytes: ColumnDataType;
  readonly double: ColumnDataType;
  /** Type of an auto-increment integer key (identity in PostgreSQL, rowid alias in SQLite). */
  readonly autoIdType: ColumnDataType;
  /** better-sqlite3 cannot bind JS booleans; pg sends them as booleans. */
  toBool(value: boolean): number | boolean;
  /** SQLite hands back the JSON text, pg the parsed json value. */
  readJson(value: unknown): unknown;
  /**
   * An epoch-ms column as the API writes it (toIsoMicros: `2026-03-05T09:30:00.000000Z`), for
   * text search over dates.
   */
  isoText(column: string): RawBuilder<string>;
  /**
   * A text column to order by code point (UTF-8 bytes), as SQLite's BINARY does, whatever the
   * PostgreSQL database's collation (en_US.UTF-8, the official image's default, puts "alpha"
   * before "Zeta" and ignores "_" and "-" at first).
   */
  byCodePoint(column: string): RawBuilder<string>;
  classify(error: unknown): DbErrorKind;
}

export const sqliteDialect: Dialect = {
  kind: "sqlite",
  ms: "integer",
  bool: "integer",
  json: "text",
  bytes: "blob",
  double: "real",
  autoIdType: "integer",
  toBool: (value) => (value ? 1 : 0),
  readJson: (value) => (typeof value === "string" ? JSON.parse(value) : (value ?? null)),
  // %f is seconds with milliseconds; the stored times are whole milliseconds.
  isoText: (column) =>
    sql<string>`strftime('%Y-%m-%dT%H:%M:%f', ${sql.ref(column)} / 1000.0, 'unixepoch') || '000Z'`,
  byCodePoint: (column) => sql<string>`${sql.ref(column)}`,
  classify(error) {
    const code = errorCode(error);
    if (code === undefined) return "other";
    if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
      return "unique";
    }
    if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") return "foreign_key";
    if (code.startsWith("SQLITE_CONSTRAINT") || code === "SQLITE_MISMATCH") return "invalid";
    if (/^SQLITE_(CANTOPEN|BUSY|LOCKED|IOERR|READONLY|FULL|NOTADB|CORRUPT)/.test(code)) {
      return "unavailable";
    }
    return "other";
  },
};

/** Node socket errors pg surfaces when the server cannot be reached. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end)/;

export const postgresDialect: Dialect = {
  kind: "postgres",
  ms: "bigint",
  bool: "boolean",
  // json keeps the text as written (jsonb reorders keys): migration 0008.
  json: "json",
  bytes: "bytea",
  double: "double precision",
  autoIdType: "bigint",
  toBool: (value) => value,
  readJson: (value) => value ?? null,
  // Whole days, then the milliseconds of the day: a count of milliseconds times an interval goes
  // through a double, and past about the year 4253 its microseconds drifted (.124992 for .125).
  isoText: (column) =>
    sql<string>`to_char(timestamp 'epoch' + (${sql.ref(column)} / 86400000) * interval '1 day' + (${sql.ref(column)} % 86400000) * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
  byCodePoint: (column) => sql<string>`${sql.ref(column)} collate "C"`,
  classify(error) {
    const code = errorCode(error);
    if (code === undefined) {
      // pg's own connection failures carry no code; match its messages only, never a caller's.
      const message = error instanceof Error ? error.message : "";
      return PG_CONNECTION_MESSAGES.test(message) ? "unavailable" : "other";
    }
    if (code === "23505") return "unique";
    if (code === "23503") return "foreign_key";
    // 23xxx integrity, 22xxx data exceptions (out of range, bad text representation).
    if (code.startsWith("23") || code.startsWith("22")) return "invalid";
    // 08 connection, 28 auth, 3D000 no such database, 53 resources, 57P admin shutdown; and,
    // like SQLITE_BUSY, the transient 40001 serialization failure and 40P01 deadlock (two
    // writers on the same rows, e.g. two ingest processes): trying again succeeds.
    if (
      /^(08|28|53|57P)/.test(code) ||
      code === "3D000" ||
      code === "40001" ||
      code === "40P01" ||
      NETWORK_CODES.has(code)
    ) {
      return "unavailable";
    }
    return "other";
  },
};

export function dialectFor(kind: DialectKind): Dialect {
  return kind === "sqlite" ? sqliteDialect : postgresDialect;
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") return code;
  // Node reports a refused dual-stack connect as an AggregateError carrying the code.
  const inner = (error as { errors?: unknown[] }).errors?.[0];
  return inner === undefined ? undefined : errorCode(inner);
}

/** Maps a driver error to the store's stable codes; RpmlabErrors pass through untouched. */
export function toStoreError(d: Dialect, error: unknown, what: string): unknown {
  if (error instanceof RpmlabError) return error;
  const kind = d.classify(error);
  const reason = error instanceof Error ? error.message : String(error);
  switch (kind) {
    case "unique":
      return new RpmlabError("E_STORE_CONFLICT", `${what}: already exists (${reason})`, {}, error);
    case "foreign_key":
      return new RpmlabError(
        "E_STORE_NOT_FOUND",
        `${what}: refers to a missing record (${reason})`,
        {},
        error,
      );
    case "invalid":
      return new RpmlabError("E_STORE_INVALID", `${what}: ${reason}`, {}, error);
    case "unavailable":
      return new RpmlabError("E_STORE_UNAVAILABLE", `${what}: ${reason}`, {}, error);
    default:
      return error;
  }
}

/** Reads a boolean column (0/1 or true/false). */
export function readBool(value: unknown): boolean {
  return value === true || value === 1 || value === "1" || value === "t";
}

/** JSON columns are written as text on both dialects (pg would turn JS arrays into SQL arrays). */
export function writeJson(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** int8 columns and count(*) come back from pg as text unless parsed; accept both. */
export function readNum(value: unknown): number {
  return typeof value === "number" ? value : Number(value);
}

export function readNumOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : readNum(value);
}

/** better-sqlite3 binds Buffers, not plain Uint8Arrays; pg takes either. Zero-copy view. */
export function writeBytes(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value)
    ? value
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

export function writeBytesOrNull(value: Uint8Array | null | undefined): Buffer | null {
  return value === null || value === undefined ? null : writeBytes(value);
}
