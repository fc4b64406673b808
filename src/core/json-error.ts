import { printParseErrorCode, visit } from "jsonc-parser";

/** Where, and why, a text stops being JSON: a UTF-16 index into it and the problem in words. */
export interface JsonError {
  readonly at: number;
  readonly problem: string;
}

/**
 * The first error of RFC 8259 JSON in `text` (jsonc-parser, with its comments, trailing commas
 * and empty content refused), or null when it finds none. JSON.parse says where only sometimes
 * ("at position N") and otherwise quotes the text, control characters and all ("Unexpected token
 * '\x1b', "\x1b]0;…" is not valid JSON"); jsonc-parser gives the offset of the token at fault
 * and what was expected there.
 */
export function firstJsonError(text: string): JsonError | null {
  let first: JsonError | null = null;
  visit(
    text,
    {
      onError(error, offset) {
        // "PropertyNameExpected" → "property name expected".
        first ??= { at: offset, problem: words(printParseErrorCode(error)) };
      },
    },
    { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
  );
  return first;
}

function words(code: string): string {
  return code.replace(/(?<=[a-z])(?=[A-Z])/g, " ").toLowerCase();
}

/**
 * What is wrong with `text` as JSON and where, or null when jsonc-parser finds nothing wrong:
 * `property name expected at byte 8 ("}")`, `value expected at byte 16, its end`. `where` names
 * the place of an index into `text` as the sender counts it (`byte 8` of the bytes it sent). The
 * character there is escaped, never raw: a body of terminal escapes is not replayed on whoever
 * reads the error.
 */
export function describeJsonError(text: string, where: (index: number) => string): string | null {
  const error = firstJsonError(text);
  if (error === null) return null;
  if (error.at >= text.length) return `${error.problem} at ${where(error.at)}, its end`;
  const char = String.fromCodePoint(text.codePointAt(error.at)!);
  return `${error.problem} at ${where(error.at)} (${JSON.stringify(char)})`;
}

/**
 * `byte N` of UTF-8 `payload` for an index into `text`, its decoding (which dropped a leading
 * byte order mark, EF BB BF).
 */
export function utf8ByteAt(payload: Uint8Array, text: string): (index: number) => string {
  const bom = payload[0] === 0xef && payload[1] === 0xbb && payload[2] === 0xbf ? 3 : 0;
  return (index) => `byte ${bom + Buffer.byteLength(text.slice(0, index))}`;
}
