import {
  type DatabaseMetadataOptions,
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  type Kysely,
  PostgresIntrospector,
  sql,
  type TableMetadata,
} from "kysely";

interface ColumnRow {
  table: string;
  table_type: string;
  schema: string;
  column: string;
  not_null: boolean;
  has_default: boolean;
  type: string;
  type_schema: string;
  column_description: string | null;
  auto_incrementing: string | null;
}

/**
 * Kysely's PostgreSQL introspection, limited to the store's own schema (the one its search_path
 * puts first, as the migrator's tables are: kysely-store.ts). The migrator looks for its tables
 * through `getTables()` at every start; Kysely's own query reads every schema of the database
 * and looks each one up by name (has_schema_privilege, pg_get_serial_sequence) after scanning
 * the catalogue. A schema another client dropped between the scan and the look-up — a second
 * lab reset, a test run, any application sharing the database — failed this lab's start with
 * `schema "…" does not exist`. Here other schemas are filtered out by the scan itself, and
 * name look-ups (in the select list, evaluated only for rows that pass) see this schema only.
 */
export class OwnSchemaIntrospector extends PostgresIntrospector {
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's Dialect.createIntrospector hands any.
  constructor(private readonly db: Kysely<any>) {
    super(db);
  }

  override async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as table, c.relkind as table_type, ns.nspname as schema,
        a.attname as column, a.attnotnull as not_null, a.atthasdef as has_default,
        typ.typname as type, dtns.nspname as type_schema,
        col_description(a.attrelid, a.attnum) as column_description,
        pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname),
          a.attname) as auto_incrementing
      from pg_catalog.pg_attribute a
        join pg_catalog.pg_class c on a.attrelid = c.oid
        join pg_catalog.pg_namespace ns on c.relnamespace = ns.oid
        join pg_catalog.pg_type typ on a.atttypid = typ.oid
        join pg_catalog.pg_namespace dtns on typ.typnamespace = dtns.oid
      where ns.nspname = current_schema()
        and c.relkind in ('r', 'v', 'p')
        and a.attnum >= 0
        and not a.attisdropped
        and (${options.withInternalKyselyTables}
          or c.relname not in (${DEFAULT_MIGRATION_TABLE}, ${DEFAULT_MIGRATION_LOCK_TABLE}))
      order by c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      let table = tables.get(row.table);
      if (table === undefined) {
        const isView = row.table_type === "v";
        table = { name: row.table, schema: row.schema, isView, columns: [] };
        tables.set(row.table, table);
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto_incrementing !== null,
        ...(row.column_description === null ? {} : { comment: row.column_description }),
      });
    }
    return [...tables.values()];
  }
}
