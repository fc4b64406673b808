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
