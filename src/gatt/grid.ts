import type { ValueSpec } from "../catalogue/schema.ts";
import { RpmlabError } from "../core/errors.ts";

/**
 * A metric value's measuring range and resolution (profile `value_1`/`value_2`: min, max, step),
 * held as decimal integers: a value on the grid is k × step, and step is `stepUnits` × 10^-decimals.
 *
 * Values cross the codecs as doubles. Decimal steps (0.1, 0.01) are not exact in binary, so a value
 * within a billionth of a step of the grid counts as on it, and the codecs hand back the canonical
 * double of k × step, the one a decimal literal parses to (0.3, never 0.30000000000000004).
 */
export interface Grid {
  readonly min: number;
  readonly max: number;
  readonly step: number;
  readonly decimals: number;
  readonly stepUnits: number;
}

const gridCache = new WeakMap<ValueSpec, Grid>();

/** Digits after the decimal point of a step (0.005 → 3, 1e-7 → 7, 5 → 0). */
export function decimalsOf(step: number): number {
  const [mantissa = "", exponent = "0"] = String(step).toLowerCase().split("e");
  const fraction = mantissa.split(".")[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}

export function gridOf(spec: ValueSpec): Grid {
  let grid = gridCache.get(spec);
  if (grid === undefined) {
    const decimals = decimalsOf(spec.step);
    grid = {
      min: spec.min,
      max: spec.max,
      step: spec.step,
      decimals,
      stepUnits: Math.round(spec.step * 10 ** decimals),
    };
    gridCache.set(spec, grid);
  }
  return grid;
}

/** The canonical double of `value` on the grid, or NaN when it is off the grid (range unchecked). */
export function onGrid(value: number, grid: Grid): number {
  const scale = 10 ** grid.decimals;
  const n = value * scale;
  const whole = Math.round(n);
  if (!(Math.abs(n - whole) <= 1e-9 * Math.max(1, Math.abs(n)))) return Number.NaN;
  if (whole % grid.stepUnits !== 0) return Number.NaN;
  return whole === 0 ? 0 : whole / scale;
}

/** The grid value nearest `value` (for values converted from other units, e.g. kPa → mmHg). */
export function nearestOnGrid(value: number, grid: Grid): number {
  const scale = 10 ** grid.decimals;
  const whole = Math.round((value * scale) / grid.stepUnits) * grid.stepUnits;
  return whole === 0 ? 0 : whole / scale;
}

/**
 * The canonical value of `value` for `field` (e.g. "blood_pressure.value_1"), or E_CODEC_RANGE
 * when it is not a finite number on the grid within [min, max].
 */
export function gridValue(
  value: number,
  grid: Grid,
  what: string,
  field: string,
  offset?: number,
): number {
  const canonical =
    typeof value === "number" && Number.isFinite(value) ? onGrid(value, grid) : Number.NaN;
  if (Number.isNaN(canonical) || canonical < grid.min || canonical > grid.max) {
    const where = offset === undefined ? "" : ` at byte ${offset}`;
    throw new RpmlabError(
      "E_CODEC_RANGE",
      `${what}: ${field}${where}: ${String(value)} is not a multiple of ${grid.step} in ${grid.min}–${grid.max}`,
      offset === undefined ? { field } : { field, offset },
    );
  }
  return canonical;
}
