/**
 * Which patients of a cohort an event targets: `htn` or `htn[*]` (all), `htn[3]` (one),
 * `htn[0-4]` (inclusive range). Patients are numbered from 0 within their cohort.
 */
export interface SelectorText {
  readonly cohort: string;
  /** undefined: every patient of the cohort. */
  readonly from?: number;
  readonly to?: number;
}

/** A selector resolved against its cohort: patients from..to, both inclusive. */
export interface Selector {
  readonly cohort: string;
  readonly from: number;
  readonly to: number;
}

export const COHORT_ID = /^[a-z][a-z0-9_-]*$/;
export const SELECTOR = /^([a-z][a-z0-9_-]*)(?:\[(?:(\*)|(\d+)(?:-(\d+))?)\])?$/;

export const SELECTOR_HELP =
  'expected a cohort id, optionally with [i], [a-b] or [*], e.g. "htn", "htn[3]", "htn[0-4]"';

/** undefined when malformed or when a range runs backwards. */
export function parseSelector(text: string): SelectorText | undefined {
  const m = SELECTOR.exec(text.trim());
  if (m === null) return undefined;
  const cohort = m[1]!;
  if (m[3] === undefined) return { cohort };
  const from = Number(m[3]);
  const to = m[4] === undefined ? from : Number(m[4]);
  return from <= to ? { cohort, from, to } : undefined;
}

/** The selector over a cohort of `count` patients; undefined when it reaches past the last. */
export function resolveSelector(selector: SelectorText, count: number): Selector | undefined {
  const from = selector.from ?? 0;
  const to = selector.to ?? count - 1;
  return to < count ? { cohort: selector.cohort, from, to } : undefined;
}

/** "htn[0-4]", "htn[3]", "htn[*]". */
export function formatSelector(selector: Selector, count?: number): string {
  if (count !== undefined && selector.from === 0 && selector.to === count - 1) {
    return `${selector.cohort}[*]`;
  }
  return selector.from === selector.to
    ? `${selector.cohort}[${selector.from}]`
    : `${selector.cohort}[${selector.from}-${selector.to}]`;
}
