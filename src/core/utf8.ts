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
