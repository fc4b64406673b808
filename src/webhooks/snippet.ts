/** Characters of an answer's body kept in the delivery log. */
export const SNIPPET_CHARS = 512;

/**
 * A body cut to SNIPPET_CHARS, marked "…" when cut (here or before). A character of two UTF-16
 * units across the cut (an emoji) is left out whole: half of it, a lone surrogate, would be
 * stored as three U+FFFD in SQLite (and one in PostgreSQL).
 */
export function snippetOf(text: string, cut = false): string {
  if (text.length <= SNIPPET_CHARS) return cut ? `${text}…` : text;
  const end = isHighSurrogate(text.charCodeAt(SNIPPET_CHARS - 1))
    ? SNIPPET_CHARS - 1
    : SNIPPET_CHARS;
  return `${text.slice(0, end)}…`;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
