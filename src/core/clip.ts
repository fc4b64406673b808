/**
 * Characters of a value quoted in an error message: the message names the field at fault and
 * stays short, however long the value (a megabyte payload, a pasted file as a flag's value).
 */
export const SHOWN_CHARS = 200;

/** `text` cut to SHOWN_CHARS, never between the two halves of a surrogate pair. */
export function clipped(text: string): string {
  if (text.length <= SHOWN_CHARS) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(SHOWN_CHARS - 1)) ? SHOWN_CHARS - 1 : SHOWN_CHARS;
  return `${text.slice(0, end)}…`;
}

/** A flag's value as an error quotes it: `"abc"`, or `"abc…" (5000 characters)` when clipped. */
export function quotedValue(text: string): string {
  return text.length <= SHOWN_CHARS
    ? `"${text}"`
    : `"${clipped(text)}" (${text.length} characters)`;
}
