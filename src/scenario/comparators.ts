/**
 * Comparators of expectations: a number (meaning ==) or a string "<op> <number>" such as
 * ">= 100". In YAML a value starting with ">" must be quoted (it would start a block scalar).
 */
export const COMPARATOR_OPS = ["==", "!=", ">=", "<=", ">", "<"] as const;
export type ComparatorOp = (typeof COMPARATOR_OPS)[number];

export interface Comparator {
  readonly op: ComparatorOp;
  readonly value: number;
}

// Two-character operators first, so ">=" is not read as ">" followed by "=100".
const COMPARATOR = /^(==|!=|>=|<=|>|<)?\s*(-?\d+(?:\.\d+)?)$/;
/** COMPARATOR with the blanks parseComparator trims, for schemas (JSON Schema `pattern`). */
export const COMPARATOR_PATTERN = /^\s*(==|!=|>=|<=|>|<)?\s*-?\d+(?:\.\d+)?\s*$/;

export const COMPARATOR_HELP =
  'expected a number or "<op> <number>" with op one of == != >= <= > <';

/** undefined when the value is neither a finite number nor "<op> <number>". */
export function parseComparator(input: number | string): Comparator | undefined {
  if (typeof input === "number") {
    return Number.isFinite(input) ? { op: "==", value: input } : undefined;
  }
  const m = COMPARATOR.exec(input.trim());
  if (m === null) return undefined;
  return { op: (m[1] ?? "==") as ComparatorOp, value: Number(m[2]) };
}

export function compare(actual: number, cmp: Comparator): boolean {
  switch (cmp.op) {
    case "==":
      return actual === cmp.value;
    case "!=":
      return actual !== cmp.value;
    case ">=":
      return actual >= cmp.value;
    case "<=":
      return actual <= cmp.value;
    case ">":
      return actual > cmp.value;
    case "<":
      return actual < cmp.value;
  }
}

/** ">= 100", "== 0". */
export function formatComparator(cmp: Comparator): string {
  return `${cmp.op} ${cmp.value}`;
}
