import type { ApiMeasurement } from "./render.ts";
import type { FilterParams } from "./types.ts";

const COLUMNS = ["timestamp", "metric", "value_1", "value_2", "filter_params"] as const;

function params(p: FilterParams | null): string {
  if (p === null) return "";
  return Object.entries(p)
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(" ");
}

/** A readable table of rendered records, one per line, columns aligned. */
export function formatTable(records: readonly ApiMeasurement[]): string {
  if (records.length === 0) return "(no readings)";
  const rows = records.map((r) => [
    r.timestamp,
    r.metric,
    r.value_1,
    r.value_2,
    params(r.filter_params),
  ]);
  const all: string[][] = [[...COLUMNS], ...rows];
  const widths = COLUMNS.map((_, c) => all.reduce((w, row) => Math.max(w, row[c]!.length), 0));
  return all
    .map((row) =>
      row
        .map((cell, c) =>
          c === row.length - 1
            ? cell
            : c === 2 || c === 3
              ? cell.padStart(widths[c]!)
              : cell.padEnd(widths[c]!),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
