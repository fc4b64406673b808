/**
 * Durations as configuration writes them: a number and a unit (`500ms`, `90s`, `15m`, `4h`,
 * `1.5d`), and ranges of them (`2d..5d`; one duration is a range of width zero). Parsing
 * returns undefined for text that is not one, so callers word the error for their field.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/** DURATION's text without groups or anchors, for patterns that hold a duration. */
export const DURATION_TEXT = String.raw`\d+(?:\.\d+)?\s*(?:ms|s|m|h|d)`;

/** What a duration looks like (surrounding blanks allowed), for schemas: JSON Schema `pattern`. */
export const DURATION_PATTERN = new RegExp(String.raw`^\s*${DURATION_TEXT}\s*$`);

/** A range of durations, both ends in milliseconds, min <= max. */
export interface MsRange {
  readonly minMs: number;
  readonly maxMs: number;
}

export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (m === null) return undefined;
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** `a..b` or `a`; undefined when malformed or when a > b. */
export function parseDurationRange(text: string): MsRange | undefined {
  const parts = text.split("..");
  if (parts.length > 2) return undefined;
  const min = parseDuration(parts[0]!);
  const max = parts.length === 2 ? parseDuration(parts[1]!) : min;
  if (min === undefined || max === undefined || min > max) return undefined;
  return { minMs: min, maxMs: max };
}

/** The shortest exact spelling: 86400000 → "1d", 5400000 → "90m". */
export function formatDuration(ms: number): string {
  for (const unit of ["d", "h", "m", "s"] as const) {
    const size = UNIT_MS[unit]!;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

export function formatDurationRange(range: MsRange): string {
  return range.minMs === range.maxMs
    ? formatDuration(range.minMs)
    : `${formatDuration(range.minMs)}..${formatDuration(range.maxMs)}`;
}
