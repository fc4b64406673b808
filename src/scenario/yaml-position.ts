import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";

export interface YamlPosition {
  readonly line: number;
  readonly column: number;
}

/**
 * Where a field of a scenario's text is, for its error message (`file:18:29: path: message`,
 * the form editors and CI annotations jump to): the key of the field, or the item of a list.
 * A field the file does not write itself (missing, or taken through a merge key) is placed at
 * the nearest key above it that the file writes; undefined when not even its first key is.
 */
export function yamlLocator(
  text: string,
): (path: ReadonlyArray<PropertyKey>) => YamlPosition | undefined {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, merge: true });
  return (path) => {
    let node: unknown = doc.contents;
    let offset: number | undefined;
    for (const segment of path) {
      const step = typeof segment === "symbol" ? undefined : stepInto(node, segment);
      if (step === undefined) break;
      node = step.node;
      offset = step.offset;
    }
    if (offset === undefined) return undefined;
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
}

/** The child at one path segment, and where its key (or list item) starts. */
function stepInto(
  node: unknown,
  segment: string | number,
): { node: unknown; offset: number } | undefined {
  if (isSeq(node) && typeof segment === "number") {
    const item = node.items[segment] as Node | undefined;
    const start = item?.range?.[0];
    return start === undefined ? undefined : { node: item, offset: start };
  }
  if (!isMap(node)) return undefined;
  const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
  const start = (pair?.key as Node | undefined)?.range?.[0];
  return start === undefined ? undefined : { node: pair!.value, offset: start };
}
