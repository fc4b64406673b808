import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  visit,
} from "yaml";

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

/**
 * Where YAML the parser took fails to convert: an alias with no anchor before it, or a merge key
 * (`<<`) whose source is not a map. The parser builds both and throws only when making values,
 * with no position; this finds the node so the problem, too, reads `file:line:column` (README
 * "Scenario files": text that is not YAML, where the parser stopped).
 */
export function yamlFaultPosition(text: string): YamlPosition | undefined {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, merge: true });
  const resolved = (node: unknown) => (isAlias(node) ? node.resolve(doc) : node);
  let offset: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (node.resolve(doc) !== undefined) return undefined;
      offset = node.range?.[0];
      return visit.BREAK;
    },
    Pair(_key, pair) {
      if (!isMergeKey(pair.key)) return undefined;
      // As the parser merges: the value, or each item of a list it is (or is an alias of).
      const value = resolved(pair.value);
      const sources = isSeq(value) ? value.items : [pair.value];
      const bad = sources.find((source) => !isMap(resolved(source)));
      if (bad === undefined) return undefined;
      offset = ((isPair(bad) ? bad.key : bad) as Node | null)?.range?.[0];
      return visit.BREAK;
    },
  });
  if (offset === undefined) return undefined;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/** A plain `<<` key (a quoted one is an ordinary key): what the parser merges. */
function isMergeKey(key: unknown): boolean {
  if (!isScalar(key) || (key.type !== undefined && key.type !== "PLAIN")) return false;
  const { value } = key;
  return value === "<<" || (typeof value === "symbol" && value.description === "<<");
}
