/**
 * A plain-text table for terminal output: columns left-aligned and separated by two spaces, no
 * trailing blanks, so the output reads well and stays easy to grep and to split on runs of spaces.
 */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>) {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((row) => (row[c] ?? "").length)));
  return all
    .map((row) =>
      header
        .map((_, c) => (row[c] ?? "").padEnd(widths[c] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
