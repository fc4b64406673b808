import type { ColumnType, Generated } from "kysely";

/** Column kinds the two dialects store differently (dialect.ts converts them). */

/** Epoch ms: integer (SQLite) / bigint (PostgreSQL, parsed to number by the pool). */
export type Ms = number;
/** integer 0/1 (SQLite) / boolean (PostgreSQL). */
export type Bool = number | boolean;
/** text (SQLite) / json (PostgreSQL): written as JSON text, read as text or parsed value. */
export type Json = ColumnType<unknown, string | null, string | null>;
/** blob / bytea. */
export type Bytes = Uint8Array;
export type AutoId = Generated<number>;
