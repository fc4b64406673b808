/**
 * Where a text stops being JSON (RFC 8259), for reasons that name the byte at fault. JSON.parse
 * says it only sometimes ("at position N", in UTF-16 units, not bytes) and otherwise quotes the
 * text itself, control characters and all ("Unexpected token '\x1b', "\x1b]0;…" is not valid
 * JSON"). Iterative, so an array nested 200,000 deep does not overflow the stack.
 */

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX = /^[0-9A-Fa-f]$/;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS = ["true", "false", "null"];

/** Index (UTF-16 units) of the first character at which `text` stops being JSON; -1: it is JSON. */
export function jsonSyntaxErrorAt(text: string): number {
  const n = text.length;
  let i = 0;
  const stack: string[] = [];
  const skipWhitespace = () => {
    while (i < n && WHITESPACE.has(text[i]!)) i++;
  };
  /** At a `"`: past the string, or false with `i` at the character at fault. */
  const string = (): boolean => {
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c !== 0x5c) {
        i++;
        continue;
      }
      i++;
      const e = text[i];
      if (e === undefined) return false;
      if (e !== "u") {
        if (!ESCAPES.has(e)) return false;
        i++;
        continue;
      }
      i++;
      for (let k = 0; k < 4; k++, i++) if (!HEX.test(text[i] ?? "")) return false;
    }
    return false;
  };
  /** At an object's key (after `{` or `,`): past its `:`, or false. */
  const key = (): boolean => {
    skipWhitespace();
    if (text[i] !== '"' || !string()) return false;
    skipWhitespace();
    if (text[i] !== ":") return false;
    i++;
    return true;
  };
  skipWhitespace();
  for (;;) {
    // A value starts at i.
    const c = text[i];
    let scalar = true;
    if (c === "{" || c === "[") {
      i++;
      skipWhitespace();
      if (text[i] === (c === "{" ? "}" : "]")) i++;
      else {
        stack.push(c);
        if (c === "{" && !key()) return i;
        skipWhitespace();
        scalar = false;
      }
    } else if (c === '"') {
      if (!string()) return i;
    } else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      NUMBER.lastIndex = i;
      if (!NUMBER.test(text)) return i + 1;
      i = NUMBER.lastIndex;
    } else {
      const word = LITERALS.find((w) => w[0] === c);
      if (word === undefined) return i;
      for (const letter of word) {
        if (text[i] !== letter) return i;
        i++;
      }
    }
    if (!scalar) continue;
    // After a value: a separator, the end of containers, or the end of the text.
    for (;;) {
      skipWhitespace();
      const open = stack.at(-1);
      if (open === undefined) return i === n ? -1 : i;
      if (text[i] === ",") {
        i++;
        if (open === "{" && !key()) return i;
        skipWhitespace();
        break;
      }
      if (text[i] !== (open === "{" ? "}" : "]")) return i;
      i++;
      stack.pop();
    }
  }
}
