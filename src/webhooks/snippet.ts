/** Characters of an answer's body kept in the delivery log. */
export const SNIPPET_CHARS = 512;

/** A body cut to SNIPPET_CHARS, marked "…" when cut (here or before). */
export function snippetOf(text: string, cut = false): string {
  return text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS)}…` : cut ? `${text}…` : text;
}
