/** Decodes without throwing: every byte that starts no valid character becomes U+FFFD. */
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Offset of the first byte of `bytes` that does not begin a valid UTF-8 sequence (WHATWG
 * decoding). Every character before the first U+FFFD the lenient decoder made came from valid
 * bytes, so its UTF-8 length is that offset; a U+FFFD the payload itself carried (EF BF BD) is
 * passed over.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const text = lenient.decode(bytes);
  let offset = 0;
  let from = 0;
  for (let at = text.indexOf("\uFFFD"); at >= 0; at = text.indexOf("\uFFFD", at + 1)) {
    offset += Buffer.byteLength(text.slice(from, at));
    from = at;
    if (!(bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd)) {
      return offset;
    }
  }
  return bytes.byteLength;
}

/**
 * Offset of the byte that starts the first character `encoding` (a TextDecoder label, e.g.
 * utf-16le) cannot decode in `bytes`, which it refuses: as firstInvalidUtf8, for any charset.
 * Decoding a prefix as an unfinished stream fails from the first prefix that holds the bad
 * sequence on (a character cut off at the end is not yet an error), so a binary search finds
 * where that sequence ends; the character starts after the longest prefix before it that
 * decodes whole. Bytes it all decodes as a stream end inside a character: the search is from
 * the end.
 */
export function firstUndecodable(bytes: Uint8Array, encoding: string): number {
  const fails = (length: number, stream: boolean): boolean => {
    try {
      new TextDecoder(encoding, { fatal: true }).decode(bytes.subarray(0, length), { stream });
      return false;
    } catch {
      return true;
    }
  };
  let low = 1;
  let high = bytes.byteLength;
  if (fails(high, true)) {
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      if (fails(middle, true)) high = middle;
      else low = middle + 1;
    }
  }
  let start = high - 1;
  while (start > 0 && fails(start, false)) start--;
  return Math.max(start, 0);
}
